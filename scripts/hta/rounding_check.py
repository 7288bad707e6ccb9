"""Why `cuda-pipe analyze` and HTA differ on communication/computation overlap, from one Kineto trace per rank.

Both take the share of the merged NCCL kernel time during which some other kernel ran. HTA first moves every event
inward to whole microseconds (its trace_parser's round_down_time_stamps: start rounded up, end rounded down, after
pytorch/pytorch#122425), which shortens each kernel by up to 1 us; analyze keeps Kineto's nanosecond times. This
prints, per trace, the overlap both ways: on the times as written (analyze's figure) and on HTA's rounded times
(HTA's figure, which HTA prints to 0.01 pp).

Usage: python3 scripts/hta/rounding_check.py TRACE.json[.gz]...
"""
import gzip
import json
import math
import sys


def merged(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def overlap_pct(comm, comp):
    comp = merged(comp)
    total = covered = 0.0
    j = 0
    for start, end in merged(comm):
        total += end - start
        while j < len(comp) and comp[j][1] <= start:
            j += 1
        k = j
        while k < len(comp) and comp[k][0] < end:
            covered += min(comp[k][1], end) - max(comp[k][0], start)
            k += 1
    return 100 * covered / total if total else None


def kernels(path):
    with (gzip.open if path.endswith('.gz') else open)(path, 'rt') as f:
        events = json.load(f)['traceEvents']
    return [e for e in events if e.get('cat') == 'kernel' and e.get('ph') == 'X']


for path in sys.argv[1:]:
    ks = kernels(path)
    as_written = lambda e: (e['ts'], e['ts'] + e['dur'])
    hta_rounded = lambda e: (math.ceil(e['ts']), math.floor(e['ts'] + e['dur']))
    row = {'trace': path}
    for label, times in (('asWritten', as_written), ('htaRounded', hta_rounded)):
        comm = [times(e) for e in ks if e['name'].startswith('nccl')]
        comp = [times(e) for e in ks if not e['name'].startswith('nccl')]
        pct = overlap_pct(comm, comp)
        row[label] = None if pct is None else round(pct, 3)
    print(json.dumps(row))
