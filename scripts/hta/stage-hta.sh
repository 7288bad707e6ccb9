#!/usr/bin/env bash
# Stages Holistic Trace Analysis's source for a GPU host that has no package registry (issue 27's comparison with
# HTA): its `hta/` package, at the mirrored commit, into build/hta-src/ (git-ignored; carried to the host with the
# working tree), where scripts/hta/hta_overlap.py puts it on sys.path. HTA is not installed, only read from there.
#
# HTA parses its event-argument table from YAML when it is imported; the hosts' Python may lack PyYAML, so the table
# is also written here as JSON (build/hta-src/event_args.json, converted with this machine's PyYAML), and
# hta_overlap.py's stand-in `yaml` module serves that JSON when the real one is missing.
#
# Usage, on the machine that has the mirror (the search tool's `fetch github:facebookresearch/HolisticTraceAnalysis`):
#   bash scripts/hta/stage-hta.sh [HTA_GIT_DIR]     (default /work/.mirror/facebookresearch+HolisticTraceAnalysis/repo)
set -euo pipefail
git_dir=${1:-/work/.mirror/facebookresearch+HolisticTraceAnalysis/repo}
root=$(cd "$(dirname "$0")/../.." && pwd)
dest=$root/build/hta-src
[[ -d $git_dir ]] || { echo "stage-hta: no HTA git directory at $git_dir (fetch github:facebookresearch/HolisticTraceAnalysis first)" >&2; exit 2; }
commit=$(git --git-dir="$git_dir" rev-parse HEAD)
rm -rf "$dest"
mkdir -p "$dest"
# The tree of hta/ alone: the mirror may lack big blobs elsewhere (notebooks), which a path-filtered archive of the
# whole commit still walks.
git --git-dir="$git_dir" archive --format=tar --prefix=hta/ "$commit:hta" | tar -x -C "$dest"
git --git-dir="$git_dir" show "$commit:LICENSE" > "$dest/LICENSE"
echo "$commit" > "$dest/HTA_COMMIT"
yaml_file=$dest/hta/configs/event_args_formats/event_args_1.0.0.yaml
python3 - "$yaml_file" "$dest/event_args.json" <<'PY'
import json
import sys

import yaml

with open(sys.argv[1]) as f:
    content = yaml.safe_load(f)
with open(sys.argv[2], 'w') as f:
    json.dump(content, f, indent=1)
print(f'stage-hta: {len(content["AVAILABLE_ARGS"])} event args as JSON')
PY
echo "stage-hta: HTA $commit ($(find "$dest/hta" -name '*.py' | wc -l) Python files) in $dest"
