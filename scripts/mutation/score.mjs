// A file's or a group's mutants counted as Stryker counts them: detected (killed + timed out) over valid mutants
// (detected + survived + no coverage); errors are not valid. summary.mjs and combine.mjs both count by it.
export function count(mutants) {
  const by = (status) => mutants.filter((m) => m.status === status).length;
  const c = {
    killed: by('Killed'),
    timeout: by('Timeout'),
    survived: by('Survived'),
    noCoverage: by('NoCoverage'),
    errors: by('RuntimeError') + by('CompileError'),
  };
  c.valid = c.killed + c.timeout + c.survived + c.noCoverage;
  c.detected = c.killed + c.timeout;
  c.score = c.valid ? (100 * c.detected) / c.valid : NaN;
  return c;
}
