// The layering of docs/ARCHITECTURE.md, enforced in `npm test`. Each rule names the layer it keeps clean and why.
// Every rule counts type-only imports too: a type names the module it comes from as surely as a call does.
// Folder cycles are checked by ./.dependency-cruiser-runtime.cjs (see there).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-module-cycles',
      comment: 'No module reaches itself through its imports, type-only imports included: the kinds name the model (src/model/), never the core that lists them.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'the-model-is-a-leaf',
      comment: 'src/model/ (schedules, modes, the timeline, the bound) is what the core and the kinds both read: it imports none of them, only the neutral modules.',
      severity: 'error',
      from: { path: '^src/model/' },
      to: { path: '^src/', pathNot: '^src/model/|^src/(vocabulary|modes|format|chunking|quantile|clocks|errors)\\.ts$' },
    },
    {
      name: 'the-kind-contract-sits-on-the-model',
      comment: 'src/kinds/api/ is the contract between the core and the kinds: it names the model, the device layer and the neutral modules, nothing of the core.',
      severity: 'error',
      from: { path: '^src/kinds/api/' },
      to: { path: '^src/', pathNot: '^src/(kinds/api|model|cuda)/|^src/(vocabulary|modes|format|chunking|quantile|clocks|errors)\\.ts$' },
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
      name: 'a-kind-is-its-own-folder',
      comment: "A stage kind (src/kinds/<kind>/) imports its own folder, the kind contract (src/kinds/api/), the model (src/model/), the device layer (src/cuda/, a library of its own through src/cuda/ffi.ts), the shared library calls (src/kinds/blas/) and the neutral modules: no other kind, nothing of the core. What a hook needs of the core comes in through the contract.",
      severity: 'error',
      from: { path: '^src/kinds/([^/]+)/', pathNot: '^src/kinds/(api|blas|host/workers)/' },
      to: { path: '^src/', pathNot: '^src/kinds/$1/|^src/(kinds/api|kinds/blas|model|cuda)/|^src/(vocabulary|modes|format|chunking|quantile|clocks|errors)\\.ts$' },
    },
    {
      name: 'the-shared-library-calls-are-a-kind-s-too',
      comment: 'src/kinds/blas/ holds what the library kinds share (the SMs they run on, the column-major call, the library wrapper): it imports what a kind may, and no kind.',
      severity: 'error',
      from: { path: '^src/kinds/blas/' },
      to: { path: '^src/', pathNot: '^src/(kinds/api|kinds/blas|model|cuda)/|^src/(vocabulary|modes|format|chunking|quantile|clocks|errors)\\.ts$' },
    },
    {
      name: 'a-kind-is-its-own-folder-but-its-workers-share-the-fill-and-file-rules',
      comment:
        "The host stage's worker script runs in a thread of its own, where nothing can be handed to it: its decode function writes the very pattern the run's own fill writes (src/data/patterns.ts and its window size, src/data/compare.ts), a user's module is read by a config file's rules (src/files/), and the pool finds the worker script from the package's root (src/paths.ts). Those five modules, and nothing else of the core, may be loaded by src/kinds/host/workers/.",
      severity: 'error',
      from: { path: '^src/kinds/host/workers/' },
      to: {
        path: '^src/',
        pathNot: '^src/kinds/host/|^src/(kinds/api|model|cuda)/|^src/(vocabulary|modes|format|chunking|quantile|clocks|errors|paths)\\.ts$|^src/(data/(patterns|compare)|files/(read|limits))\\.ts$',
      },
    },
    {
      name: 'kinds-are-reached-through-their-list',
      comment: 'The core reaches a kind, and the kind contract, only through src/kinds/index.ts, the door of the one list of kinds (src/kinds/list.ts), so no layer names a kind module.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/kinds/' },
      to: { path: '^src/kinds/', pathNot: '^src/kinds/index\\.ts$' },
    },
    {
      name: 'cuda-knows-no-kind',
      comment: 'src/cuda is the bottom layer: the kinds bind libraries through it, never the other way round.',
      severity: 'error',
      from: { path: '^src/cuda/' },
      to: { path: '^src/kinds/' },
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
      from: { path: '^src/kinds/host/workers/' },
      to: { path: '^src/(cuda|exec|plan|measure|api|cli|report|config|kernels|analysis|result|compare)/|^src/kinds/(?!host/workers/)', pathNot: '^src/cuda/(host-view|worker-event)\\.ts$' },
    },
    {
      name: 'traces-are-read-not-measured',
      comment: "`cuda-pipe analyze` works on a profiler's trace file alone, on any machine: reading it reaches no device, plans and measures nothing, and draws nothing itself (report/ renders the analysis).",
      severity: 'error',
      from: { path: '^src/traces/' },
      to: { path: '^src/(cuda|exec|measure|plan|api|cli|report|config|kernels|kinds|analysis)/' },
    },
    {
      name: 'a-format-reads-into-the-event-model',
      comment: 'A trace format (src/traces/formats/<format>/) only reads its files into the event model: it imports the model, the Chrome record, the format contract and leaf utilities, and nothing of another format or of the readers that choose between them.',
      severity: 'error',
      from: { path: '^src/traces/formats/([^/]+)/' },
      to: {
        path: '^src/',
        pathNot: ['^src/traces/formats/$1/', '^src/traces/(events|errors|chrome/record|formats/format)\\.ts$', '^src/(errors|vocabulary|format|quantile)\\.ts$', '^src/files/'],
      },
    },
    {
      name: 'the-analysis-core-names-no-format',
      comment: "The analysis core reads the event model and, where it needs a format's words or clock, the list of formats: never a format by name, nor the readers of files.",
      severity: 'error',
      from: { path: '^src/analysis/' },
      to: { path: '^src/traces/', pathNot: '^src/traces/(events|formats/index|formats/format)\\.ts$' },
    },
    {
      name: 'neutral-modules-stay-neutral',
      comment: 'vocabulary, modes, format, chunking, quantile, bimodal, clocks and errors are shared by every layer, so they import none of them.',
      severity: 'error',
      from: { path: '^src/(vocabulary|modes|format|chunking|quantile|bimodal|clocks|errors)\\.ts$' },
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
    // A kind's tests sit in its folder (src/kinds/<kind>/*.test.ts) and may reach any layer: the rules are for the product.
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
