"""Holistic Trace Analysis's own figures for the traces `cuda-pipe analyze` is checked against (issue 27): per rank,
HTA's communication/computation overlap (TraceAnalysis.get_comm_comp_overlap, which CommunicationAnalysis computes:
the time an NCCL kernel and a compute kernel both ran, over the NCCL kernels' merged time), HTA's kernel time by its
own kernel types, and its idle time breakdown (host wait, kernel wait, other) per stream. One JSON document on stdout.

HTA is run, not re-implemented: its source, staged by scripts/hta/stage-hta.sh into build/hta-src/ (or --hta-src, or
$HTA_SRC), is put first on sys.path, and TraceAnalysis loads the traces. HTA is computed twice:

  allSteps       include_last_profiler_step=True: every profiled step, as `analyze` takes them
  htaDefault     HTA's default, which drops the kernels launched from the last ProfilerStep on

STAND-INS. HTA imports some packages at module level that a GPU host without a registry may lack. Where the real one
imports, it is used; where it does not, a minimal stand-in goes into sys.modules before HTA is imported, and the
document's `standIns` lists each one used:
  plotly (plotly, .express, .graph_objects, .subplots, .io)  only drawn with visualize=True, which is never passed
                                                             here; any call raises
  networkx   only for critical-path analysis, not called here; CPGraph subclasses nx.DiGraph, so a bare class
  psutil     virtual_memory().available, for the parse pool's size past 8 ranks; read from /proc/meminfo
  yaml       safe_load of HTA's event-argument table, which HTA parses at import: served from the JSON that
             stage-hta.sh converted from that same YAML file (build/hta-src/event_args.json); anything else raises
None of them enters a figure.

Usage: python3 scripts/hta/hta_overlap.py TRACE_DIR | TRACE... [--hta-src DIR] [--no-idle] [--out FILE]
  TRACE_DIR holds one Kineto trace per rank (.json or .gz; HTA reads every such file there and takes each one's rank
  from `"rank": N`, i.e. distributedInfo); or the trace files themselves.
Exit 2 when HTA cannot be found or loads no trace; a figure HTA fails on is an `errors` entry, the rest still come."""
import argparse
import contextlib
import json
import os
import platform
import sys
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SRC = os.path.join(HERE, '..', '..', 'build', 'hta-src')


def _raiser(name):
    def fail(*_args, **_kwargs):
        raise RuntimeError(f'{name} is a stand-in (hta_overlap.py): HTA asked it to plot, which this script never asks')
    return fail


def _attributes_raise(name):
    """A module __getattr__ (PEP 562) giving, for any public name, a function that raises when called."""
    def getattr_(attr):
        if attr.startswith('__'):
            raise AttributeError(attr)
        return _raiser(f'{name}.{attr}')
    return getattr_


def _plotly_standin():
    """plotly and the submodules HTA imports; every attribute is a function that raises."""
    names = ['plotly', 'plotly.express', 'plotly.graph_objects', 'plotly.subplots', 'plotly.io']
    modules = {}
    for name in names:
        module = types.ModuleType(name)
        module.__getattr__ = _attributes_raise(name)
        module.__path__ = []  # a package, so `import plotly.express` is resolved from sys.modules
        modules[name] = module
    for name in names[1:]:
        setattr(modules['plotly'], name.split('.')[1], modules[name])
    return modules


def _networkx_standin():
    module = types.ModuleType('networkx')

    class DiGraph:  # CPGraph's base class at import; critical-path analysis is never run here
        def __init__(self, *_args, **_kwargs):
            raise RuntimeError('networkx is a stand-in (hta_overlap.py): critical-path analysis is not run here')

    module.DiGraph = DiGraph
    module.NetworkXUnfeasible = type('NetworkXUnfeasible', (Exception,), {})
    module.__getattr__ = _attributes_raise('networkx')
    return {'networkx': module}


def _psutil_standin():
    module = types.ModuleType('psutil')

    def virtual_memory():
        with open('/proc/meminfo') as f:
            fields = dict(line.split(':', 1) for line in f if ':' in line)
        available = int(fields['MemAvailable'].split()[0]) * 1024
        return types.SimpleNamespace(available=available)

    module.virtual_memory = virtual_memory
    return {'psutil': module}


def _yaml_standin(src):
    module = types.ModuleType('yaml')
    table = os.path.join(src, 'event_args.json')

    def safe_load(stream):
        text = stream if isinstance(stream, str) else stream.read()
        if 'AVAILABLE_ARGS' not in text:
            raise RuntimeError('yaml is a stand-in (hta_overlap.py): it serves only HTA\'s event-argument table')
        with open(table) as f:
            return json.load(f)

    module.safe_load = safe_load
    return {'yaml': module}


def install_standins(src):
    """Each missing module's stand-in into sys.modules; returns the names of those used."""
    used = []
    for real, make in (('plotly', _plotly_standin), ('networkx', _networkx_standin), ('psutil', _psutil_standin),
                       ('yaml', lambda: _yaml_standin(src))):
        try:
            __import__(real)
            if real == 'plotly':
                __import__('plotly.express')
                __import__('plotly.graph_objects')
        except ImportError:
            sys.modules.update(make())
            used.append(real)
    return used


def trace_inputs(paths):
    """(trace_dir, trace_files): a folder for HTA to list, or the files for it to rank itself."""
    if len(paths) == 1 and os.path.isdir(paths[0]):
        return os.path.abspath(paths[0]), None
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise SystemExit(f'hta_overlap: no such trace file: {", ".join(missing)}')
    return os.getcwd(), [os.path.abspath(p) for p in paths]


def finite(value):
    """None for NaN: HTA's overlap is 0/0 on a rank without communication, and NaN is not JSON."""
    value = float(value)
    return value if value == value else None


def overlap_by_rank(analysis):
    frame = analysis.get_comm_comp_overlap(visualize=False)
    return {str(int(row['rank'])): finite(row['comp_comm_overlap_pctg']) for _, row in frame.iterrows()}


def kernel_time_by_type(analysis):
    """Per rank, each HTA kernel type's count and merged time (ms), by HTA's own get_kernel_type and
    merge_kernel_intervals over the events with a stream, the set get_comm_comp_overlap classifies: shows what HTA
    counted as compute and as communication when its overlap differs from `analyze`'s."""
    from hta.utils.utils import get_kernel_type, merge_kernel_intervals
    sym_table = analysis.t.symbol_table.get_sym_table()
    out = {}
    for rank, frame in analysis.t.traces.items():
        gpu = frame[frame['stream'].ne(-1)].copy()
        gpu['kernel_type'] = [get_kernel_type(sym_table[n]) for n in gpu['name']]
        per_type = {}
        for kind, group in gpu.groupby('kernel_type'):
            merged = merge_kernel_intervals(group[['ts', 'dur']].copy())
            names = sorted({sym_table[n] for n in group['name']})
            per_type[kind] = {'count': int(len(group)), 'mergedMs': float((merged['end'] - merged['ts']).sum()) / 1e3,
                              'names': names[:12], 'distinctNames': len(names)}
        out[str(rank)] = per_type
    return out


def idle_by_rank(analysis):
    """HTA's idle time breakdown per rank and stream, ms by category (its ts are µs)."""
    ranks = sorted(analysis.t.traces.keys())
    frame, _ = analysis.get_idle_time_breakdown(ranks=ranks, visualize=False, visualize_pctg=False)
    out = {}
    for _, row in frame.iterrows():
        rank = str(int(row['rank'])) if 'rank' in frame.columns else '?'
        stream = str(int(row['stream']))
        out.setdefault(rank, {}).setdefault(stream, {})[str(row['idle_category'])] = float(row['idle_time']) / 1e3
    return out


def attempt(errors, label, fn):
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 - one failed figure is reported, the others still come
        errors.append({'figure': label, 'error': f'{type(error).__name__}: {error}',
                       'traceback': traceback.format_exc(limit=6)})
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('traces', nargs='+', help='a folder of one trace per rank, or the trace files')
    parser.add_argument('--hta-src', default=os.environ.get('HTA_SRC', DEFAULT_SRC),
                        help='folder holding the hta/ package (stage-hta.sh writes build/hta-src)')
    parser.add_argument('--no-idle', dest='idle', action='store_false', help="skip HTA's idle time breakdown")
    parser.add_argument('--out', help='also write the JSON document here')
    args = parser.parse_args()
    src = os.path.abspath(args.hta_src)
    if not os.path.isfile(os.path.join(src, 'hta', 'trace_analysis.py')):
        print(f'hta_overlap: no HTA source at {src} (run scripts/hta/stage-hta.sh, or give --hta-src)', file=sys.stderr)
        sys.exit(2)
    trace_dir, trace_files = trace_inputs(args.traces)

    # HTA's logger writes to the sys.stdout it finds at import: point that at stderr, so stdout is the document.
    document_out = sys.stdout
    sys.stdout = sys.stderr
    sys.path.insert(0, src)
    standins = install_standins(src)
    import numpy
    import pandas
    from hta.trace_analysis import TraceAnalysis
    from hta.version import __version__ as hta_version

    commit_file = os.path.join(src, 'HTA_COMMIT')
    document = {
        'tool': 'hta_overlap.py', 'hta': {'version': hta_version, 'src': src,
                                          'commit': open(commit_file).read().strip() if os.path.exists(commit_file) else None},
        'standIns': standins, 'python': platform.python_version(), 'pandas': pandas.__version__, 'numpy': numpy.__version__,
        'inputs': args.traces, 'errors': [],
    }
    errors = document['errors']
    loaded = {}
    for key, include_last in (('allSteps', True), ('htaDefault', False)):
        loaded[key] = attempt(errors, f'load {key}', lambda include_last=include_last: TraceAnalysis(
            trace_files=trace_files, trace_dir=trace_dir, include_last_profiler_step=include_last))
    if not any(loaded.values()):
        sys.stdout = document_out
        print(json.dumps(document, indent=1))
        print('hta_overlap: HTA loaded no trace (see errors)', file=sys.stderr)
        sys.exit(2)
    first = loaded['allSteps'] or loaded['htaDefault']
    document['traceFiles'] = {str(rank): path for rank, path in sorted(first.t.trace_files.items())}
    document['commCompOverlapPct'] = {key: attempt(errors, f'overlap {key}', lambda a=a: overlap_by_rank(a))
                                      for key, a in loaded.items() if a is not None}
    document['kernelTimeByType'] = {key: attempt(errors, f'kernel types {key}', lambda a=a: kernel_time_by_type(a))
                                    for key, a in loaded.items() if a is not None}
    if args.idle and loaded['allSteps'] is not None:
        document['idleMsByStream'] = attempt(errors, 'idle allSteps', lambda: idle_by_rank(loaded['allSteps']))
    sys.stdout = document_out
    text = json.dumps(document, indent=1, allow_nan=False)
    print(text)
    if args.out:
        with open(args.out, 'w') as f:
            f.write(text + '\n')


if __name__ == '__main__':
    with contextlib.suppress(BrokenPipeError):
        main()
