#!/usr/bin/env bash
# The README's first screen: `cuda-pipe report` of the H100 run in 2026-11-26-h100-first-hour/second/ (its saved
# Result, conclusions drawn again by today's build), into a pipe, so its tables fit 100 columns, without colour.
# usage: bash docs/measurements/2026-11-28-first-hour/report.sh > first-hour-balanced.report.txt
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
NO_COLOR=1 "$root/bin/cuda-pipe" report "$root/docs/measurements/2026-11-26-h100-first-hour/second/balanced.json"
