'use strict';
// The least a Node.js command can do to answer --version: run one CommonJS file that reads the package's manifest and
// prints its version. start.mjs times it beside `node -e ""`: what any command installed as a file pays before its own
// work (Node.js finding, reading and compiling the file, and its CommonJS loader), the floor for `cuda-pipe --version`.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

process.stdout.write(`${JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')).version}\n`);
