import type { KIND_FLAGS as ListedFlags } from '../kinds/index.js';

// The flags the stage kinds add to `run` and `sweep`, which commander must know before it parses (options.ts). Run
// from the sources (the tests, where a fixture kind may be in the list), read from the list. The CLI's bundle replaces
// this module by one holding them as JSON, read from the kinds when it is built (scripts/bundle-cli.mjs): no start
// loads the kinds for them, and no chunk of the bundle holds a top-level await, which its CommonJS cannot.
export const KIND_FLAGS: typeof ListedFlags = (await import('../kinds/index.js')).KIND_FLAGS;
