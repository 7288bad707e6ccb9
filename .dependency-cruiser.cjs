// The layering of docs/ARCHITECTURE.md, enforced in `npm test`. Each rule names the layer it keeps clean and why.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycles',
      comment: 'Data flows one way (config → plan → exec → measure → result → report): no two folders may import each other, even indirectly.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-module-cycles',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'only-cuda-imports-koffi',
      comment: 'Native pointers and koffi stay inside src/cuda, behind typed wrappers.',
      severity: 'error',
      from: { pathNot: '^src/cuda/' },
      to: { path: 'node_modules/koffi/' },
    },
    {
      name: 'renderers-draw-from-results',
      comment: 'Every table and picture is drawn from a Result alone, so a saved file redraws it: no CUDA, no executor, no orchestration.',
      severity: 'error',
      from: { path: '^src/report/' },
      to: { path: '^src/(cuda|exec|api|measure|cli)/' },
    },
    {
      name: 'measure-depends-on-the-rep-runner-interface',
      comment: 'The repetition loop, verification and warnings are tested on the CPU with a fake runner: measure/ never reaches the device itself.',
      severity: 'error',
      from: { path: '^src/measure/' },
      to: { path: '^src/(cuda|exec|api|cli|report)/' },
    },
    {
      name: 'plan-is-pure-data',
      comment: 'The planner allocates and times nothing; --dry-run prints its output without a GPU.',
      severity: 'error',
      from: { path: '^src/plan/' },
      to: { path: '^src/(cuda|exec|measure|api|cli|report)/' },
    },
    {
      name: 'stage-kinds-are-descriptors',
      comment: 'A stage kind (src/stages) is pure data and pure functions that the planner, the analysis and the renderers read: it issues its op through the typed IssuePrimitives that exec/ implements, and imports no layer.',
      severity: 'error',
      from: { path: '^src/stages/' },
      to: { path: '^src/(cuda|exec|measure|plan|api|cli|report|config|result|analysis|compare|kernels|data|files)/' },
    },
    {
      name: 'config-touches-no-cuda',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: '^src/(cuda|exec|measure|plan|api|cli|report|kernels)/' },
    },
    {
      name: 'workers-run-functions-not-pipelines',
      comment: 'The worker pool runs host stage functions over memory handed over by address; it knows no plan, stream or executor. Its worker script opens that memory, and waits for the event of its chunk, through the two koffi helpers it needs: src/cuda/host-view.ts and src/cuda/worker-event.ts.',
      severity: 'error',
      from: { path: '^src/workers/' },
      to: { path: '^src/(cuda|exec|plan|measure|api|cli|report|config|kernels|analysis|result|compare)/', pathNot: '^src/cuda/(host-view|worker-event)\\.ts$' },
    },
    {
      name: 'neutral-modules-stay-neutral',
      comment: 'vocabulary, modes, format, chunking, quantile and errors are shared by every layer, so they import none of them.',
      severity: 'error',
      from: { path: '^src/(vocabulary|modes|format|chunking|quantile|errors)\\.ts$' },
      to: { path: '^src/[^/]+/' },
    },
    {
      name: 'only-the-cli-is-a-command-line',
      comment: 'Commands, flags and exit codes live in src/cli; nothing below it imports it.',
      severity: 'error',
      from: { pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'orchestration-is-for-the-cli',
      severity: 'error',
      from: { pathNot: '^src/(cli|api)/' },
      to: { path: '^src/api/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
