// Lists the recorded files the mutation tests read, for build/mut/measured.tar.xz (scripts/mutation/host.sh): preload
// it into the listed tests, and every path under docs/measurements that fs opens, lists or checks is appended to
// $TRACE_READS (default /tmp/measured-reads.txt). Usage, after `npx tsc -p tsconfig.json`:
//   NODE_OPTIONS="--require ./scripts/mutation/trace-reads.cjs" node --test $(node -p \
//     "require('./stryker.config.json').tap.testFiles.join(' ')")
//   sed 's#.*docs/measurements#docs/measurements#' /tmp/measured-reads.txt | sort -u
'use strict';
const fs = require('node:fs');

const out = process.env.TRACE_READS || '/tmp/measured-reads.txt';
const log = (p) => {
  const path = String(p);
  if (path.includes('docs/measurements')) fs.appendFileSync(out, `${path}\n`);
};
for (const name of ['readFileSync', 'openSync', 'readdirSync', 'statSync', 'existsSync', 'createReadStream']) {
  const original = fs[name];
  fs[name] = function traced(p, ...rest) {
    log(p);
    return original.call(this, p, ...rest);
  };
}
for (const name of ['readFile', 'open', 'readdir', 'stat']) {
  const original = fs.promises[name];
  fs.promises[name] = function traced(p, ...rest) {
    log(p);
    return original.call(this, p, ...rest);
  };
}
