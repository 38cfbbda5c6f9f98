/**
 * Loading one simulated cluster's config file (`flotilla-agent --simulated FILE`): the settings of
 * one fleet entry (see config.ts), `name` included unless the caller names the cluster.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { FlotillaError, formatProblems } from "@flotilla/core";
import {
  parseSimulatedCluster,
  type SimulatedClusterConfig,
} from "./config.js";
import { parserFor, readDocument, type TextParser } from "./text-file.js";

/** Options of {@link loadSimulatedCluster}. */
export interface LoadSimulatedClusterOptions {
  readonly signal?: AbortSignal;
  /** Needed for YAML files; see text-file.ts. */
  readonly parseText?: TextParser;
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
  const read = await readDocument(
    file,
    parserFor(file, options.parseText),
    options,
  );
  if (!read.ok)
    throw new FlotillaError(
      "invalid_argument",
      `Cannot load simulated cluster file "${file}": ${formatProblems(read.problems, "; ")}`,
    );
  let raw = read.value;
  if (options.name !== undefined) {
    if (raw === null || raw === undefined) raw = {};
    if (typeof raw === "object" && !Array.isArray(raw))
      raw = { ...raw, name: options.name };
  }
  const parsed = parseSimulatedCluster(raw);
  if (!parsed.ok)
    throw FlotillaError.invalid(
      `simulated cluster file "${file}"`,
      parsed.problems,
    );
  const cluster = parsed.value;
  return cluster.maintenanceFile === undefined ||
    isAbsolute(cluster.maintenanceFile)
    ? cluster
    : {
        ...cluster,
        maintenanceFile: resolve(dirname(file), cluster.maintenanceFile),
      };
}
