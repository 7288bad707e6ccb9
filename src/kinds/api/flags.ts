// What a kind's runtime reads from outside the config: environment variables, and command-line flags of its own.

/**
 * A flag a kind adds to the commands that run a config (`run`, `sweep`): its option as commander spells it, its help,
 * and the key its value is handed to the kind's runtime under (`OpenContext.flags`).
 */
export interface KindFlag {
  /** `--nccl-dir <folder>` */
  readonly option: string;
  readonly description: string;
  /** The option's name in camel case, as commander gives its value (`ncclDir`). */
  readonly key: string;
}

/** The values of the kinds' flags a command was given, by key; a flag not given is absent. */
export type KindFlagValues = Readonly<Record<string, string | undefined>>;

export interface KindFlags {
  /** The environment variables its runtime reads, each with what it is for (`cuda-pipe --help` lists them). */
  readonly environment?: ReadonlyArray<readonly [string, string]>;
  /** Its own command-line flags. */
  readonly flags?: readonly KindFlag[];
}
