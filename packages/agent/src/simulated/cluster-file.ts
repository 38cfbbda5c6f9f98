/**
 * Loading one simulated cluster's config file (`flotilla-agent --simulated FILE`): the settings of
 * one fleet entry (see config.ts), `name` included unless the caller names the cluster.
 */
import {
  parseSimulatedCluster,
  type SimulatedClusterConfig,
} from "./config.js";
import {
  loadSettingsFile,
  withMaintenanceFileFrom,
  type SettingsFileOptions,
} from "./settings-file.js";

/** Options of {@link loadSimulatedCluster}. */
export interface LoadSimulatedClusterOptions extends SettingsFileOptions {
  /** The cluster's name; replaces the file's `name` (a command-line flag wins over the file). */
  readonly name?: string;
}

/**
 * Reads and parses a simulated cluster file; a relative `maintenanceFile` is resolved against the
 * file's directory. Throws `invalid_argument` naming the file, with every problem and its path.
 */
export async function loadSimulatedCluster(
  file: string,
  options: LoadSimulatedClusterOptions = {},
): Promise<SimulatedClusterConfig> {
  const { name } = options;
  const named = (raw: unknown): unknown => {
    if (name === undefined) return raw;
    const value = raw ?? {};
    return typeof value === "object" && !Array.isArray(value)
      ? { ...value, name }
      : value;
  };
  const cluster = await loadSettingsFile(
    file,
    "simulated cluster file",
    (raw) => parseSimulatedCluster(named(raw)),
    options,
  );
  return withMaintenanceFileFrom(file, cluster);
}
