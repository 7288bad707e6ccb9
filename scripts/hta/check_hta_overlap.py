"""A check of hta_overlap.py on a two-rank trace whose overlap is worked out by hand, runnable on a CPU machine with
pandas and numpy (and build/hta-src staged): it proves that HTA's source loads here, with whichever stand-ins this
Python needs, that both ranks are read, and that the figures are HTA's as defined.

Rank 1 is test/fixtures/analyze/ddp-nccl.json. Step 0 (CPU 100-1000 us): compute 1000-2000, NCCL 1400-2200, so 600
of 800 us hidden; step 1 (CPU from 2300): compute 3000-3500, NCCL 3500-3900, none of 400 hidden. Rank 0 is the same
trace with the rank and device set to 0 and step 0's NCCL kernel moved to 1200-2000, inside the compute: 800 of 800
hidden in step 0. Expected, in percent:

  allSteps (every step):               rank 0: 800 / 1200 = 66.67    rank 1: 600 / 1200 = 50.0
  htaDefault (HTA drops the kernels launched from the last ProfilerStep's start on, here step 1's):
                                       rank 0: 800 / 800 = 100.0     rank 1: 600 / 800 = 75.0

Usage: PYTHON scripts/hta/check_hta_overlap.py   (exit 1 on a wrong figure; prints hta_overlap.py's document)"""
import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, '..', '..')
EXPECTED = {'allSteps': {'0': 66.67, '1': 50.0}, 'htaDefault': {'0': 100.0, '1': 75.0}}


def rank0_of(trace):
    moved = copy.deepcopy(trace)
    moved['distributedInfo']['rank'] = 0
    for event in moved['traceEvents']:
        args = event.get('args', {})
        if 'device' in args:
            args['device'] = 0
            event['pid'] = 0
        if args.get('correlation') == 3 and event.get('cat') == 'kernel':
            event['ts'], event['dur'] = 1200, 800
    return moved


def main():
    with open(os.path.join(ROOT, 'test', 'fixtures', 'analyze', 'ddp-nccl.json')) as f:
        rank1 = json.load(f)
    with tempfile.TemporaryDirectory() as folder:
        for rank, trace in ((0, rank0_of(rank1)), (1, rank1)):
            with open(os.path.join(folder, f'rank{rank}.json'), 'w') as f:
                json.dump(trace, f)
        done = subprocess.run([sys.executable, os.path.join(HERE, 'hta_overlap.py'), folder],
                              capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr)
        sys.exit(f'hta_overlap.py exited {done.returncode}')
    document = json.loads(done.stdout)
    print(json.dumps({k: document[k] for k in ('hta', 'standIns', 'python', 'pandas', 'numpy', 'errors',
                                                'commCompOverlapPct', 'idleMsByStream')}, indent=1))
    got = document['commCompOverlapPct']
    wrong = [f'{key} rank {rank}: {got.get(key, {}).get(rank)} != {value}'
             for key, ranks in EXPECTED.items() for rank, value in ranks.items()
             if got.get(key, {}).get(rank) != value]
    if wrong or document['errors']:
        sys.exit('check_hta_overlap: ' + '; '.join(wrong + [e['figure'] + ': ' + e['error'] for e in document['errors']]))
    print(f'check_hta_overlap: every figure as worked out by hand (pandas {document["pandas"]}, '
          f'stand-ins: {", ".join(document["standIns"]) or "none"})')


if __name__ == '__main__':
    main()
