/** Loading a simulated fleet file from disk (see config.ts for its format). */
import { dirname, isAbsolute, resolve } from "node:path";
import { FlotillaError, formatProblems } from "@flotilla/core";
import { parseSimulatedFleet, type SimulatedFleet } from "./config.js";
import { parserFor, readDocument, type TextParser } from "./text-file.js";

/** Options of {@link loadSimulatedFleet}. */
export interface LoadSimulatedFleetOptions {
  readonly signal?: AbortSignal;
  /** Needed for YAML files; see text-file.ts. */
  readonly parseText?: TextParser;
}

/**
 * Reads and parses a fleet file. `maintenanceFile` paths are resolved against the fleet file's
 * directory. Throws `invalid_argument` naming the file, with every problem and its path.
 */
export async function loadSimulatedFleet(
  file: string,
  options: LoadSimulatedFleetOptions = {},
): Promise<SimulatedFleet> {
  const read = await readDocument(
    file,
    parserFor(file, options.parseText),
    options,
  );
  if (!read.ok)
    throw new FlotillaError(
      "invalid_argument",
      `Cannot load simulated fleet file "${file}": ${formatProblems(read.problems, "; ")}`,
    );
  const parsed = parseSimulatedFleet(read.value);
  if (!parsed.ok)
    throw FlotillaError.invalid(
      `simulated fleet file "${file}"`,
      parsed.problems,
    );
  const base = dirname(file);
  return {
    ...parsed.value,
    clusters: parsed.value.clusters.map((c) =>
      c.maintenanceFile === undefined || isAbsolute(c.maintenanceFile)
        ? c
        : { ...c, maintenanceFile: resolve(base, c.maintenanceFile) },
    ),
  };
}
