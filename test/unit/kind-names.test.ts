import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { STAGES } from '../../src/kinds/index.js';

// The core (everything under src/ but src/kinds/) names no kind. Everything here is read from the sources and the
// list of kinds, so a new kind (the echo fixture kind, test/fixtures/kinds/echo/, under kinds-fixture.test.ts) is
// checked as the others are:
// - the core imports no module of src/kinds/ but the list's door, src/kinds/index.ts;
// - the list passes none of a kind's own names through to the core (its ops, builders, constants);
// - a kind's id is written as a string in the core only where it is a word of the Result's vocabulary
//   (src/vocabulary.ts: a stage mode's role, an op's kind on the timeline), which recorded Results spell;
// - no identifier of the core holds one of a kind's own concepts: the phrase (two words) that two or more of the
//   names its folder declares begin with ("cpu stage" from the host stage's cpuStageMs and cpuStageFloor, "read
//   host" from readHost and readHostFn), so `cpuStage` threaded through the core, or a `readHost` beside it, fails.

// Run from the repository's root, as npm test runs every test.
const ROOT = process.cwd();
const src = (...parts: string[]) => join(ROOT, 'src', ...parts);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const parse = (file: string) => ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
const core = sources(src()).filter((file) => !file.startsWith(src('kinds')));

/** The module specifiers a file imports or re-exports from, resolved against its folder. */
function imports(file: string): string[] {
  return parse(file).statements.flatMap((s) =>
    (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) &&
    s.moduleSpecifier &&
    ts.isStringLiteral(s.moduleSpecifier) &&
    s.moduleSpecifier.text.startsWith('.')
      ? [resolve(dirname(file), s.moduleSpecifier.text).replace(/\.js$/, '.ts')]
      : [],
  );
}

/** The names a module exports by declaration or by an export list (its own or passed through). */
function exportedNames(file: string): string[] {
  return parse(file).statements.flatMap((s) => {
    if (ts.isExportDeclaration(s))
      return s.exportClause && ts.isNamedExports(s.exportClause) ? s.exportClause.elements.map((e) => e.name.text) : [];
    const exported = ts.canHaveModifiers(s) && ts.getModifiers(s)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) return [];
    if (ts.isVariableStatement(s))
      return s.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : []));
    const named = s as ts.Statement & { readonly name?: ts.Identifier };
    return named.name ? [named.name.text] : [];
  });
}

/** The kinds' folders: those the list imports a kind from (not the contract, src/kinds/api/, nor kinds/blas/). */
const LIST = src('kinds', 'list.ts');
/** The one module of src/kinds/ the core imports: what the list gives the core passes through it. */
const DOOR = src('kinds', 'index.ts');
const folders = [
  ...new Set(
    imports(LIST)
      .filter((path) => path.startsWith(src('kinds', '')))
      .map((path) => relative(src('kinds'), path).split('/')[0] as string),
  ),
].filter((folder) => folder !== 'api' && !folder.endsWith('.ts'));
const kindNames = new Set(folders.flatMap((folder) => sources(src('kinds', folder)).flatMap(exportedNames)));

/** The names a module declares at its top level, exported or not: the words it names its own things by. */
function declaredNames(file: string): string[] {
  return parse(file).statements.flatMap((s) => {
    if (ts.isVariableStatement(s))
      return s.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : []));
    const named = s as ts.Statement & { readonly name?: ts.Node };
    return named.name && ts.isIdentifier(named.name) ? [named.name.text] : [];
  });
}

/** The words of a name: cpuStageMs, CpuStageTiming and HOST_MODE_FIELDS each as lower-case words. */
const words = (name: string): string[] =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[\s_$]+/)
    .filter(Boolean);

/** Each kind's concepts: the first two words of its folder's names, where two or more distinct names begin so. */
function kindPhrases(): Map<string, string> {
  const begun = new Map<string, { kind: string; names: Set<string> }>();
  const shared = new Set<string>();
  for (const folder of folders) {
    for (const name of new Set([
      ...sources(src('kinds', folder)).flatMap(declaredNames),
      ...sources(src('kinds', folder)).flatMap(exportedNames),
    ])) {
      const phrase = words(name).slice(0, 2).join(' ');
      if (!phrase.includes(' ')) continue;
      const entry = begun.get(phrase) ?? { kind: folder, names: new Set<string>() };
      // A phrase two kinds begin names with is the contract's or the model's, not one kind's.
      if (entry.kind !== folder) shared.add(phrase);
      entry.names.add(name);
      begun.set(phrase, entry);
    }
  }
  return new Map(
    [...begun].flatMap(([phrase, { kind, names }]) =>
      names.size >= 2 && !shared.has(phrase) ? [[phrase, kind] as const] : [],
    ),
  );
}
const phrases = kindPhrases();

/** The identifiers of a source text that hold a kind's phrase, as `identifier (kind: phrase)`. */
function conceptsIn(file: string, text = readFileSync(file, 'utf8')): string[] {
  const found = new Set<string>();
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      const w = words(node.text);
      for (let i = 0; i + 1 < w.length; i++) {
        const kind = phrases.get(`${w[i]} ${w[i + 1]}`);
        if (kind) found.add(`${node.text} (${kind}: ${w[i]} ${w[i + 1]})`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
  return [...found];
}

/** Every string literal of a file, as the scanner reads it (comments and template text left out). */
function strings(file: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(parse(file));
  return found;
}

describe('the core names no kind', () => {
  it('finds the kinds in the list: a folder per kind, and the names each exports', () => {
    assert.ok(folders.length >= 7, folders.join(', '));
    assert.ok(kindNames.size > 50, `${kindNames.size} names`);
    for (const folder of folders) assert.ok(sources(src('kinds', folder)).length, folder);
  });

  it("imports no module of src/kinds/ but the list's door, src/kinds/index.ts", () => {
    const reached = core.flatMap((file) =>
      imports(file).flatMap((path) =>
        path.startsWith(src('kinds')) && path !== DOOR ? [`${relative(ROOT, file)} → ${relative(ROOT, path)}`] : [],
      ),
    );
    assert.deepEqual(reached, []);
  });

  it("passes none of a kind's own names from the list to the core", () => {
    assert.deepEqual(
      exportedNames(DOOR).filter((name) => kindNames.has(name)),
      [],
    );
  });

  it("writes a kind's id as a string only where the Result's vocabulary spells it", () => {
    const vocabulary = new Set(strings(src('vocabulary.ts')));
    const written = core.flatMap((file) => {
      const ids = new Set(
        strings(file).filter((text) => (STAGES as readonly string[]).includes(text) && !vocabulary.has(text)),
      );
      return [...ids].map((id) => `${relative(ROOT, file)}: '${id}'`);
    });
    assert.deepEqual(written, []);
  });

  it("names none of a kind's own concepts in any identifier", () => {
    const named = core.flatMap((file) => conceptsIn(file).map((found) => `${relative(ROOT, file)}: ${found}`));
    assert.deepEqual(named, []);
  });

  it("would see a kind's concept in the core, whatever the identifier's case or place in it", () => {
    assert.equal(phrases.get('cpu stage'), 'host');
    assert.equal(phrases.get('read host'), 'host');
    const leak =
      'const cpuStage = timing.cpuStage;\ninterface RepTiming { readonly cpuStage?: CpuStageTiming }\nreadHost(parsed);';
    assert.deepEqual(conceptsIn('leak.ts', leak).sort(), [
      'CpuStageTiming (host: cpu stage)',
      'cpuStage (host: cpu stage)',
      'readHost (host: read host)',
    ]);
    // A word the core shares with a kind alone (the host memory, a copy) is not a concept.
    assert.deepEqual(conceptsIn('plain.ts', 'const hostMemory = copyBytes(buffer);'), []);
  });

  it('would see a kind named in the core: the checks find what they look for', () => {
    assert.ok(strings(src('plan', 'schedules.ts')).includes('kernel'));
    assert.ok(exportedNames(src('kinds', 'copy', 'index.ts')).includes('copyOp'));
    assert.ok(imports(src('plan', 'types.ts')).includes(DOOR));
    assert.ok(exportedNames(DOOR).includes('STAGE_KINDS'));
  });
});
