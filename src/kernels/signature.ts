import type { ElementType, ScalarType } from '../vocabulary.js';

export type KernelParam =
  | {
      readonly kind: 'pointer';
      readonly name: string;
      readonly text: string;
      /** The element type the pointer points at; 'any' for void and char pointers, null when we cannot tell. */
      readonly pointee: ElementType | 'any' | null;
      readonly isConst: boolean;
    }
  | {
      readonly kind: 'scalar';
      readonly name: string;
      readonly text: string;
      /** null for scalar types we cannot encode (structs, __half by value). */
      readonly type: ScalarType | null;
    };

export interface KernelSignature {
  readonly name: string;
  readonly params: readonly KernelParam[];
  /** 1-based line of the `extern "C"` in the source. */
  readonly line: number;
  readonly text: string;
}

const SCALAR_SPELLINGS: ReadonlyArray<[string[], ScalarType]> = [
  [['float'], 'float32'],
  [['double'], 'float64'],
  [['int', 'signed', 'signed int', 'int32_t'], 'int32'],
  [['unsigned', 'unsigned int', 'uint32_t', 'uint'], 'uint32'],
  [['long long', 'long long int', 'signed long long', 'long', 'long int', 'int64_t', 'ptrdiff_t', 'ssize_t'], 'int64'],
  [['unsigned long long', 'unsigned long long int', 'unsigned long', 'unsigned long int', 'uint64_t', 'size_t'], 'uint64'],
  [['short', 'short int', 'int16_t'], 'int16'],
  [['unsigned short', 'unsigned short int', 'uint16_t'], 'uint16'],
  [['char', 'signed char', 'int8_t'], 'int8'],
  [['unsigned char', 'uint8_t'], 'uint8'],
];
const SCALAR_BY_SPELLING = new Map(SCALAR_SPELLINGS.flatMap(([spellings, type]) => spellings.map((s) => [s, type] as const)));

const POINTEE_BY_SPELLING: ReadonlyMap<string, ElementType | 'any'> = new Map([
  ['float', 'float32'], ['double', 'float64'],
  ['int', 'int32'], ['int32_t', 'int32'], ['signed int', 'int32'],
  ['unsigned', 'uint32'], ['unsigned int', 'uint32'], ['uint32_t', 'uint32'],
  ['unsigned char', 'uint8'], ['uint8_t', 'uint8'],
  ['__half', 'float16'], ['half', 'float16'], ['unsigned short', 'float16'], ['uint16_t', 'float16'],
  ['void', 'any'], ['char', 'any'],
]);

const QUALIFIERS = /\b(const|volatile|__restrict__|__restrict|restrict|__grid_constant__)\b/g;

function stripComments(source: string): string {
  // Keep newlines so that line numbers stay right.
  return source
    .replace(/\/\*[\s\S]*?\*\//g, (block) => block.replace(/[^\n]/g, ' '))
    .replace(/\/\/[^\n]*/g, '');
}

const KERNEL = /extern\s+"C"\s+((?:__\w+__(?:\s*\([^)]*\))?\s+)*)void\s+((?:__launch_bounds__\s*\([^)]*\)\s+)?)([A-Za-z_]\w*)\s*\(([^)]*)\)/g;

/** Every `extern "C" __global__` function in a CUDA source, with its parameters classified. */
export function parseKernelSignatures(source: string): KernelSignature[] {
  const text = stripComments(source);
  const signatures: KernelSignature[] = [];
  for (const match of text.matchAll(KERNEL)) {
    const [whole, attributes = '', , name = '', paramText = ''] = match;
    if (!/__global__/.test(attributes)) continue;
    const line = text.slice(0, match.index).split('\n').length;
    const params = paramText.trim() === '' || paramText.trim() === 'void'
      ? []
      : paramText.split(',').map((p, i) => parseParam(p, i));
    signatures.push({ name, params, line, text: whole.replace(/\s+/g, ' ') });
  }
  return signatures;
}

function parseParam(raw: string, index: number): KernelParam {
  const text = raw.replace(/\s+/g, ' ').trim();
  const isConst = /\bconst\b/.test(text);
  const bare = text.replace(QUALIFIERS, ' ').replace(/\s+/g, ' ').trim();
  const star = bare.lastIndexOf('*');
  if (star >= 0) {
    const name = bare.slice(star + 1).trim() || `arg${index}`;
    const base = bare.slice(0, bare.indexOf('*')).trim();
    return { kind: 'pointer', name, text, pointee: POINTEE_BY_SPELLING.get(base) ?? null, isConst };
  }
  const words = bare.split(' ');
  // With a name the last word is the name; a lone type word ("int") is an unnamed parameter.
  const named = words.length > 1 && !SCALAR_BY_SPELLING.has(words.join(' '));
  const name = named ? (words.pop() ?? `arg${index}`) : `arg${index}`;
  return { kind: 'scalar', name, text, type: SCALAR_BY_SPELLING.get(words.join(' ')) ?? null };
}

export function formatSignature(signature: KernelSignature): string {
  return `${signature.name}(${signature.params.map((p) => p.text).join(', ')})`;
}
