"""The comparison scripts/gpu/analyze.sh prints at its end (issue 27's validation): from the files its steps left in one folder,

  1. per DDP variant and rank, `cuda-pipe analyze`'s overlap.commWithCompute against HTA's comm/comp overlap on the
     same traces (HTA with every step, as analyze takes them, and with HTA's default, which drops the last step), in
     percentage points, and whether they agree within 0.1 pp (issue 27's bar);
  2. analyze --ab's verdict, no-overlap (A) against overlap (B);
  3. analyze of `run --trace`'s trace against run's own Result: each traced rep's time and the kernels', H2D's and
     D2H's busy shares (the union of the rep's op intervals of that kind, engine times where CUPTI gave them, over the
     rep's time), and the mode's median over all reps;
  4. the PyTorch balanced pipeline: analyze's median step against its CUDA-event times, and against run's.

A missing or unreadable file is said in its place; the rest still comes. Writes the figures as JSON with --json.

Usage: python3 scripts/hta/compare_analyze.py FOLDER [--json FILE]
  FOLDER as scripts/gpu/analyze.sh lays it out: ddp/<variant>.json, analyze/ddp-<variant>.json, hta/ddp-<variant>.json,
  analyze/ddp-ab-rank<R>.json, run/balanced.json, analyze/balanced-run.json, torch/balanced-torch.json,
  analyze/balanced-torch.json (variants: overlap, no-overlap)."""
import argparse
import json
import os
import statistics
import sys

VARIANTS = ('no-overlap', 'overlap')
AGREEMENT_PP = 0.1


def load(folder, relative, problems):
    path = os.path.join(folder, relative)
    try:
        with open(path) as f:
            text = f.read()
        # A step's stdout may hold log lines before the JSON line (torchrun, NCCL); the document is the last line
        # that parses, or the whole text.
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            for line in reversed(text.splitlines()):
                if line.startswith('{'):
                    return json.loads(line)
            raise
    except (OSError, json.JSONDecodeError) as error:
        problems.append(f'{relative}: {type(error).__name__}: {error}')
        return None


def union_ms(intervals):
    total, end = 0.0, float('-inf')
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def engine_span(op):
    """An op's engine interval where CUPTI timed it, else its event interval (as run's own analysis takes it)."""
    start = op['engineStartMs'] if op.get('engineStartMs') is not None else op['startMs']
    end = op['engineEndMs'] if op.get('engineEndMs') is not None else op['endMs']
    return start, end


def fmt(value, unit='', digits=3):
    return '-' if value is None else f'{value:.{digits}f}{unit}'


def comm_overlap(folder, problems):
    rows = []
    for variant in VARIANTS:
        analysis = load(folder, f'analyze/ddp-{variant}.json', problems)
        hta = load(folder, f'hta/ddp-{variant}.json', problems)
        program = load(folder, f'ddp/{variant}.json', problems)
        hta_pct = (hta or {}).get('commCompOverlapPct') or {}
        for device in (analysis or {}).get('devices', []):
            rank = device.get('rank')
            ours = device.get('overlap', {}).get('commWithCompute')
            ours_pct = None if ours is None else 100 * ours
            all_steps = (hta_pct.get('allSteps') or {}).get(str(rank))
            default = (hta_pct.get('htaDefault') or {}).get(str(rank))
            diff = None if ours_pct is None or all_steps is None else ours_pct - all_steps
            rows.append({
                'variant': variant, 'rank': rank, 'device': device.get('device'),
                'analyzeCommWithComputePct': ours_pct, 'htaAllStepsPct': all_steps, 'htaDefaultPct': default,
                'differencePp': diff, 'withinTenthPp': None if diff is None else abs(diff) <= AGREEMENT_PP,
                'analyzeStepMs': device.get('stepMs'), 'analyzeExposedCommMs': device.get('exposedCommMs'),
                'programSlowestRankMedianMs': (program or {}).get('slowestRankMedianMs'),
                'programParamsEqualAcrossRanks': (program or {}).get('paramsEqualAcrossRanks'),
            })
    return rows


def ab_verdicts(folder, problems):
    """Every rank's --ab verdicts (analyze/ddp-ab-rank<R>.json: --ab takes two traces, so one call a rank)."""
    folder_of_analyses = os.path.join(folder, 'analyze')
    listed = os.listdir(folder_of_analyses) if os.path.isdir(folder_of_analyses) else []
    names = sorted(n for n in listed if n.startswith('ddp-ab-rank') and n.endswith('.json'))
    if not names:
        problems.append('analyze/ddp-ab-rank*.json: none')
    verdicts = []
    for name in names:
        verdicts.extend((load(folder, f'analyze/{name}', problems) or {}).get('verdicts') or [])
    return verdicts


def run_against_result(folder, problems):
    result = load(folder, 'run/balanced.json', problems)
    analysis = load(folder, 'analyze/balanced-run.json', problems)
    if result is None or analysis is None:
        return None
    reps = (result.get('timeline') or {}).get('reps') or []
    devices = analysis.get('devices') or []
    steps = devices[0].get('steps', []) if devices else []
    modes = {m['id']: m for m in result.get('modes', [])}
    rows = []
    for i, rep in enumerate(reps):
        total = rep.get('totalMs')
        busy = {}
        for kind, kinds in (('kernels', ('kernel', 'gemm')), ('h2d', ('h2d',)), ('d2h', ('d2h',))):
            spans = [engine_span(op) for op in rep.get('ops', []) if op.get('kind') in kinds]
            busy[kind] = union_ms(spans) / total if total else None
        step = steps[i] if i < len(steps) else None
        mode = modes.get(rep.get('mode'), {})
        rows.append({
            'mode': rep.get('mode'), 'resultRepMs': total, 'resultModeMedianMs': (mode.get('stats') or {}).get('median'),
            'analyzeStep': None if step is None else step.get('name'), 'analyzeStepMs': None if step is None else step.get('ms'),
            'resultBusy': busy, 'analyzeBusy': None if step is None else {k: step.get('busy', {}).get(k) for k in busy},
            'analyzeFloorMs': None if step is None else (step.get('floor') or {}).get('ms'),
            'resultBoundMs': ((mode.get('analysis') or {}).get('bound') or {}).get('ms'),
        })
    if len(steps) != len(reps):
        problems.append(f'run trace: analyze found {len(steps)} steps, the Result has {len(reps)} traced reps '
                        '(paired in order)')
    return rows


def torch_pipeline(folder, problems, run_rows):
    program = load(folder, 'torch/balanced-torch.json', problems)
    analysis = load(folder, 'analyze/balanced-torch.json', problems)
    devices = (analysis or {}).get('devices') or []
    device = devices[0] if devices else {}
    profiled = (program or {}).get('profiledStepsMs') or []
    return {
        'programUnprofiledMedianMs': (program or {}).get('medianMs'),
        'programProfiledMedianMs': statistics.median(profiled) if profiled else None,
        'programKernel': (program or {}).get('kernel'),
        'programOutputCheckPassed': (program or {}).get('outputCheckPassed'),
        'analyzeStepMs': device.get('stepMs'), 'analyzeSteps': len(device.get('steps', [])),
        'analyzeCopyWithKernel': (device.get('overlap') or {}).get('copyWithKernel'),
        'analyzeEfficiency': device.get('efficiency'),
        'runOverlappedMedianMs': run_rows[0]['resultModeMedianMs'] if run_rows else None,
    }


def print_text(doc, out):
    print(f'== communication/compute overlap, analyze vs HTA (agree within {AGREEMENT_PP} pp?)', file=out)
    print(f'{"variant":>11} {"rank":>4} {"analyze%":>9} {"HTA all%":>9} {"diff pp":>8} {"ok":>4} '
          f'{"HTA dflt%":>9} {"step ms":>8} {"exp comm":>8} {"prog ms":>8} {"params=":>7}', file=out)
    for r in doc['commOverlap']:
        ok = '-' if r['withinTenthPp'] is None else ('yes' if r['withinTenthPp'] else 'NO')
        print(f'{r["variant"]:>11} {str(r["rank"]):>4} {fmt(r["analyzeCommWithComputePct"], digits=2):>9} '
              f'{fmt(r["htaAllStepsPct"], digits=2):>9} {fmt(r["differencePp"], digits=3):>8} {ok:>4} '
              f'{fmt(r["htaDefaultPct"], digits=2):>9} {fmt(r["analyzeStepMs"]):>8} {fmt(r["analyzeExposedCommMs"]):>8} '
              f'{fmt(r["programSlowestRankMedianMs"]):>8} {str(r["programParamsEqualAcrossRanks"]):>7}', file=out)
    print('\n== analyze --ab, no-overlap (A) against overlap (B)', file=out)
    for v in doc['abVerdicts'] or []:
        print('  ' + json.dumps(v), file=out)
    print('\n== run --trace: analyze against the Result', file=out)
    for r in doc['runTrace'] or []:
        print(f'  {r["mode"]}: traced rep {fmt(r["resultRepMs"])} ms (Result) vs step {fmt(r["analyzeStepMs"])} ms '
              f'(analyze, {r["analyzeStep"]}); mode median over reps {fmt(r["resultModeMedianMs"])} ms', file=out)
        for kind in ('kernels', 'h2d', 'd2h'):
            ours = (r['analyzeBusy'] or {}).get(kind)
            theirs = r['resultBusy'].get(kind)
            print(f'    busy {kind:>7}: Result {fmt(theirs, digits=4)} analyze {fmt(ours, digits=4)}', file=out)
        print(f'    floor: analyze {fmt(r["analyzeFloorMs"])} ms; run\'s bound {fmt(r["resultBoundMs"])} ms '
              '(different models: a comparison, not a check)', file=out)
    t = doc['torchPipeline']
    print('\n== balanced.yaml in PyTorch', file=out)
    print(f'  CUDA events: {fmt(t["programUnprofiledMedianMs"])} ms unprofiled, {fmt(t["programProfiledMedianMs"])} ms '
          f'profiled; analyze {fmt(t["analyzeStepMs"])} ms over {t["analyzeSteps"]} steps; run\'s overlapped median '
          f'{fmt(t["runOverlappedMedianMs"])} ms', file=out)
    print(f'  analyze: copies with kernels {fmt(t["analyzeCopyWithKernel"], digits=4)}, efficiency '
          f'{fmt(t["analyzeEfficiency"], digits=4)}; output check {t["programOutputCheckPassed"]}; kernel: '
          f'{t["programKernel"]}', file=out)
    if doc['problems']:
        print('\n== problems', file=out)
        for p in doc['problems']:
            print('  ' + p, file=out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('folder')
    parser.add_argument('--json', help='write the figures here')
    args = parser.parse_args()
    problems = []
    run_rows = run_against_result(args.folder, problems)
    doc = {'commOverlap': comm_overlap(args.folder, problems), 'abVerdicts': ab_verdicts(args.folder, problems),
           'runTrace': run_rows, 'torchPipeline': torch_pipeline(args.folder, problems, run_rows), 'problems': problems}
    print_text(doc, sys.stdout)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(doc, f, indent=1)


if __name__ == '__main__':
    main()
