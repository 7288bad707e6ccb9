// The perf gate's A/B mode runs `cuda-pipe ab` once per config, each writing its verdicts (--junit, --csv, --bmf,
// --gab); CI reads one file of each format, joined here. Plain JavaScript, as perf-regression.mjs is.

/**
 * One file of a format from each config's: JUnit's test suites under one root, CSV's rows under one header, BMF's
 * benchmarks in one object, GAB's entries in one array.
 */
export function joinVerdictFiles(format, texts) {
  switch (format) {
    case 'junit': {
      const suites = texts.flatMap((text) => text.match(/^ {2}<testsuite\b[\s\S]*?^ {2}<\/testsuite>$/gm) ?? []);
      // Each suite's own counts, from its opening tag (the first of each attribute in it).
      const count = (name) =>
        suites.reduce((sum, suite) => sum + Number(new RegExp(` ${name}="(\\d+)"`).exec(suite)?.[1] ?? 0), 0);
      const root = `<testsuites name="cuda-pipe perf gate" tests="${count('tests')}" failures="${count('failures')}" skipped="${count('skipped')}">`;
      return `<?xml version="1.0" encoding="UTF-8"?>\n${root}\n${suites.map((s) => `${s}\n`).join('')}</testsuites>\n`;
    }
    case 'csv': {
      const [head = ''] = texts[0]?.split('\n') ?? [];
      return [head, ...texts.flatMap((text) => text.trimEnd().split('\n').slice(1))].join('\n') + '\n';
    }
    case 'bmf':
      return JSON.stringify(Object.assign({}, ...texts.map((text) => JSON.parse(text))), null, 2) + '\n';
    default:
      return (
        JSON.stringify(
          texts.flatMap((text) => JSON.parse(text)),
          null,
          2,
        ) + '\n'
      );
  }
}
