import { outputColumns } from '../report/width.js';
import { type CommandName, commandHelp } from './help-text.js';
import { cliIo } from './io.js';

// Help and commander's own errors fit the width of the stream they go to, as every other output does (issue 39):
// each option and command is laid out by width.ts' fitItem, its description beside it or, where the column would be
// too narrow (the command list at 80 columns), under it.
export const columnsOf = (error: boolean) => outputColumns(error ? cliIo().stderr : cliIo().stdout);
/** A command's examples after its help, at the width of the stream the help goes to. */
export const examplesFor = (command: CommandName) => (context: { error: boolean }) =>
  commandHelp(command, columnsOf(context.error));
