// The folders' one-way flow at run time (config → plan → exec → measure → result → report), checked on the imports that
// load code. Type-only imports are left out here because they are erased when compiled: a stage kind names the plan's
// op it plans and the Result section it reports, while the plan derives its op union from the list of kinds. Every
// other rule, type imports included, is in ./.dependency-cruiser.cjs, which this one extends.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  extends: './.dependency-cruiser.cjs',
  forbidden: [
    {
      name: 'no-folder-cycles',
      comment: 'Data flows one way at run time: no two folders may load code from each other, even indirectly.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: { tsPreCompilationDeps: false },
};
