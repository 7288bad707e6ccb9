#!/bin/sh
# Remakes every file in this folder from the committed fixtures (run from the repository root after
# `npx tsc -p tsconfig.json`). Machine: a 2-core Debian box, no GPU; analyze needs none.
set -e
M=docs/measurements/2026-11-26-analyze-outputs
F=test/fixtures/analyze
for t in serial overlapped pageable sync; do
  COLUMNS=100 node dist/src/cli/main.js analyze $F/torch-h100/$t.pt.trace.json.gz > $M/$t.txt
done
COLUMNS=100 node dist/src/cli/main.js analyze $F/pageable-compute-stream.json > $M/pageable-compute-stream.txt
node dist/src/cli/main.js analyze $F/torch-h100/sync.pt.trace.json.gz --md $M/sync.md --html $M/sync.html --trace $M/sync.trace.json > /dev/null
COLUMNS=80 node dist/src/cli/main.js analyze $F/torch-h100/sync.pt.trace.json.gz > $M/sync-80-columns.txt
