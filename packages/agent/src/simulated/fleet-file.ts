/** Loading a simulated fleet file from disk (see config.ts for its format). */
import { parseSimulatedFleet, type SimulatedFleet } from "./config.js";
import {
  loadSettingsFile,
  withMaintenanceFileFrom,
  type SettingsFileOptions,
} from "./settings-file.js";

/** Options of {@link loadSimulatedFleet}. */
export type LoadSimulatedFleetOptions = SettingsFileOptions;

/**
 * Reads and parses a fleet file. `maintenanceFile` paths are resolved against the fleet file's
 * directory. Throws `invalid_argument` naming the file, with every problem and its path.
 */
export async function loadSimulatedFleet(
  file: string,
  options: LoadSimulatedFleetOptions = {},
): Promise<SimulatedFleet> {
  const fleet = await loadSettingsFile(
    file,
    "simulated fleet file",
    (raw) => parseSimulatedFleet(raw),
    options,
  );
  return {
    ...fleet,
    clusters: fleet.clusters.map((c) => withMaintenanceFileFrom(file, c)),
  };
}
