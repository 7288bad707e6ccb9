// The readers weighed for analyze (issue 40), each timed alone in a process of its own on one trace: CPU seconds
// (user + system) and peak RSS. Run after `npm run build`, from the repository root:
//
//   node scripts/bench/analyze-readers.mjs [--file /tmp/cuda-pipe-big/ddp-100m.pt.trace.json] [--log …]
//
// - `stream-json`: stream-json's tokenizer alone, every token counted and dropped: less than the reader it was,
//   which also assembled each event's fields from the tokens.
// - `scan+JSON.parse`: the scanner of src/traces/chrome/scan.ts finding each event's bytes, each event handed to
//   JSON.parse whole (the first version of the new reader).
// - `scan+fields`: the reader analyze uses (src/traces/parse.ts), which reads only the declared fields of each
//   event and keeps what a format keeps.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const file = flag('file', '/tmp/cuda-pipe-big/ddp-100m.pt.trace.json');
const log = flag('log', 'docs/measurements/2026-11-28-analyze-parser/readers.log');

const VARIANTS = {
  'stream-json': `
    const { default: Parser } = await import('stream-json/Parser.js');
    const { createReadStream } = await import('node:fs');
    let tokens = 0;
    const parser = new Parser({ packValues: true, streamValues: false });
    parser.on('data', () => tokens++);
    await new Promise((resolve, reject) => createReadStream(FILE, { highWaterMark: 1 << 20 }).pipe(parser).on('end', resolve).on('error', reject));
    console.log('tokens', tokens);`,
  'scan+JSON.parse': `
    const { createReadStream } = await import('node:fs');
    let events = 0;
    let depth = 0, inString = false, escaped = false, start = -1, parts = [];
    for await (const chunk of createReadStream(FILE, { highWaterMark: 1 << 20 })) {
      let from = 0;
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i];
        if (inString) { if (escaped) escaped = false; else if (c === 0x5c) escaped = true; else if (c === 0x22) inString = false; continue; }
        if (c === 0x22) inString = true;
        else if (c === 0x7b || c === 0x5b) { depth++; if (depth === 3 && c === 0x7b) { start = i; from = i; parts = []; } }
        else if (c === 0x7d || c === 0x5d) { if (depth === 3 && c === 0x7d && start >= 0) {
          const text = parts.length ? Buffer.concat([...parts, chunk.subarray(from, i + 1)]).toString() : chunk.toString('utf8', from, i + 1);
          JSON.parse(text); events++; start = -1; } depth--; }
      }
      if (start >= 0) { parts.push(chunk.subarray(from)); from = 0; }
    }
    console.log('events', events);`,
  'scan+fields': `
    const { parseTraceFile } = await import(process.cwd() + '/dist/src/traces/parse.js');
    const trace = await parseTraceFile(FILE);
    console.log('gpu', trace.gpu.length, 'host', trace.host.length);`,
};

mkdirSync(dirname(log), { recursive: true });
appendFileSync(log, `# ${new Date().toISOString()} ${file}\n`);
for (const [name, code] of Object.entries(VARIANTS)) {
  const script = `const FILE = ${JSON.stringify(file)};\n${code}`;
  const run = spawnSync('/usr/bin/time', ['-v', 'node', '--input-type=module', '-e', script], { encoding: 'utf8' });
  const field = (label) => Number(new RegExp(`${label}: ([\\d.]+)`).exec(run.stderr)?.[1]);
  const cpu = field('User time \\(seconds\\)') + field('System time \\(seconds\\)');
  const rss = field('Maximum resident set size \\(kbytes\\)') / 1024;
  const line = `${name}\tcpu ${cpu.toFixed(2)} s\tpeak RSS ${rss.toFixed(0)} MiB\texit ${run.status}\t${run.stdout.trim()}\tload ${loadavg()[0].toFixed(2)}`;
  console.log(line);
  appendFileSync(log, `${line}\n`);
}
