// The compiler's own word on a kernel's parameters: the `.entry` lines of the PTX NVRTC emits. PTX gives each
// parameter's size and whether it is a float, not what a pointer points at (every pointer is .u64).

export interface PtxParam {
  /** As PTX writes it: "u64", "f32", "b8[16]". */
  readonly type: string;
  readonly bytes: number;
  /** true for .f16/.f32/.f64, false for integers and raw bits of a struct. */
  readonly float: boolean;
}

/** Every kernel entry in a PTX module and its parameters' types, as PTX writes them ("u64", "f32", "b8[16]"). */
export function ptxEntries(ptx: string): Record<string, string[]> {
  const entries: Record<string, string[]> = {};
  for (const match of ptx.matchAll(/\.entry\s+([\w$.]+)\s*\(([^)]*)\)/g)) {
    const [, name = '', list = ''] = match;
    entries[name] = list
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
      .map((param) => {
        const type = /\.([usbf](?:8|16|32|64))\b/.exec(param)?.[1] ?? 'unknown';
        const count = /\[(\d+)\]\s*$/.exec(param)?.[1];
        return count === undefined ? type : `${type}[${count}]`;
      });
  }
  return entries;
}

/** A PTX type string read back: its size in bytes (null for one this parser does not know) and its class. */
export function ptxParam(type: string): PtxParam {
  const match = /^([usbf])(8|16|32|64)(?:\[(\d+)\])?$/.exec(type);
  if (!match) return { type, bytes: Number.NaN, float: false };
  const [, kind, bits = '0', count] = match;
  return { type, bytes: (Number(bits) / 8) * (count === undefined ? 1 : Number(count)), float: kind === 'f' };
}
