/**
 * Whether the command line is the version flag alone (`-V` or `--version`), which start.ts answers before commander
 * loads. With anything beside it (`--verbose --version`, `run --version`) commander decides, as it always did.
 */
export function onlyVersion(args: readonly string[]): boolean {
  return args.length === 1 && (args[0] === '--version' || args[0] === '-V');
}
