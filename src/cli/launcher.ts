import { launcherDevice, type LauncherDevice } from '../api/identity.js';
import { loadConfigFile } from '../config/load.js';
import type { Overrides } from '../config/types.js';
import type { RunIdentity } from '../result/environment.js';

/**
 * The GPU of a launcher's rank for `run` and `sweep`: its local rank's, unless `--device` or `--devices` names one or
 * the config drives several devices from one process. Null outside a launcher and where something else decides.
 */
export function rankDevice(
  path: string,
  overrides: Overrides,
  identity: RunIdentity,
  env: NodeJS.ProcessEnv,
): LauncherDevice | null {
  if (identity.localRank === null || overrides.device !== undefined || overrides.devices !== undefined) return null;
  const own = loadConfigFile(path, overrides).config;
  return own.devices !== null ? null : launcherDevice(identity, env, undefined, own.device);
}
