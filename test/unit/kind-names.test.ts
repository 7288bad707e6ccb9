import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { STAGES } from '../../src/kinds/index.js';

// The core (everything under src/ but src/kinds/) names no kind. Everything here is read from the sources and the
// list of kinds, so a new kind (the echo fixture kind, test/fixtures/kinds/echo/, under kinds-fixture.test.ts) is
// checked as the others are:
// - the core imports no module of src/kinds/ but the list, src/kinds/index.ts;
// - the list passes none of a kind's own names through to the core (its ops, builders, constants);
// - a kind's id is written as a string in the core only where it is a word of the Result's vocabulary
//   (src/vocabulary.ts: a stage mode's role, an op's kind on the timeline), which recorded Results spell.

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
    (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) && s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier) && s.moduleSpecifier.text.startsWith('.')
      ? [resolve(dirname(file), s.moduleSpecifier.text).replace(/\.js$/, '.ts')]
      : [],
  );
}

/** The names a module exports by declaration or by an export list (its own or passed through). */
function exportedNames(file: string): string[] {
  return parse(file).statements.flatMap((s) => {
    if (ts.isExportDeclaration(s)) return s.exportClause && ts.isNamedExports(s.exportClause) ? s.exportClause.elements.map((e) => e.name.text) : [];
    const exported = ts.canHaveModifiers(s) && ts.getModifiers(s)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) return [];
    if (ts.isVariableStatement(s)) return s.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : []));
    const named = s as ts.Statement & { readonly name?: ts.Identifier };
    return named.name ? [named.name.text] : [];
  });
}

/** The kinds' folders: those the list imports a kind from (not the contract, src/kinds/api/, nor kinds/blas/). */
const LIST = src('kinds', 'index.ts');
const folders = [
  ...new Set(
    imports(LIST)
      .filter((path) => path.startsWith(src('kinds', '')))
      .map((path) => relative(src('kinds'), path).split('/')[0] as string),
  ),
].filter((folder) => folder !== 'api' && !folder.endsWith('.ts'));
const kindNames = new Set(folders.flatMap((folder) => sources(src('kinds', folder)).flatMap(exportedNames)));

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

  it('imports no module of src/kinds/ but the list, src/kinds/index.ts', () => {
    const reached = core.flatMap((file) =>
      imports(file).flatMap((path) => (path.startsWith(src('kinds')) && path !== LIST ? [`${relative(ROOT, file)} → ${relative(ROOT, path)}`] : [])),
    );
    assert.deepEqual(reached, []);
  });

  it("passes none of a kind's own names from the list to the core", () => {
    assert.deepEqual(
      exportedNames(LIST).filter((name) => kindNames.has(name)),
      [],
    );
  });

  it("writes a kind's id as a string only where the Result's vocabulary spells it", () => {
    const vocabulary = new Set(strings(src('vocabulary.ts')));
    const written = core.flatMap((file) => {
      const ids = new Set(strings(file).filter((text) => (STAGES as readonly string[]).includes(text) && !vocabulary.has(text)));
      return [...ids].map((id) => `${relative(ROOT, file)}: '${id}'`);
    });
    assert.deepEqual(written, []);
  });

  it('would see a kind named in the core: the checks find what they look for', () => {
    assert.ok(strings(src('plan', 'schedules.ts')).includes('kernel'));
    assert.ok(exportedNames(src('kinds', 'copy', 'index.ts')).includes('copyOp'));
    assert.ok(imports(src('plan', 'types.ts')).includes(LIST));
  });
});
