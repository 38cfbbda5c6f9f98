/**
 * What loading a simulated cluster file and a simulated fleet file share: the document read and
 * parsed, refused with every problem and the file's name; and a relative `maintenanceFile`
 * resolved against the file's directory.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { FlotillaError, formatProblems, type Result } from "@flotilla/core";
import { parserFor, readDocument, type TextParser } from "./text-file.js";

/** Options of {@link loadSettingsFile}. */
export interface SettingsFileOptions {
  readonly signal?: AbortSignal;
  /** Needed for YAML files; see text-file.ts. */
  readonly parseText?: TextParser;
}

/**
 * Reads `file` and parses its document with `parse`. Throws `invalid_argument` naming the file as
 * `kind` (e.g. `simulated fleet file`), with every problem and its path.
 */
export async function loadSettingsFile<T>(
  file: string,
  kind: string,
  parse: (raw: unknown) => Result<T>,
  options: SettingsFileOptions,
): Promise<T> {
  const read = await readDocument(
    file,
    parserFor(file, options.parseText),
    options,
  );
  if (!read.ok)
    throw new FlotillaError(
      "invalid_argument",
      `Cannot load ${kind} "${file}": ${formatProblems(read.problems, "; ")}`,
    );
  const parsed = parse(read.value);
  if (!parsed.ok)
    throw FlotillaError.invalid(`${kind} "${file}"`, parsed.problems);
  return parsed.value;
}

/**
 * `settings` with a relative `maintenanceFile` and `catalogueFile` resolved against the directory
 * of `file`.
 */
export function withMaintenanceFileFrom<
  S extends {
    readonly maintenanceFile?: string;
    readonly catalogueFile?: string;
  },
>(file: string, settings: S): S {
  const from = (path: string | undefined): string | undefined =>
    path === undefined || isAbsolute(path)
      ? path
      : resolve(dirname(file), path);
  const maintenanceFile = from(settings.maintenanceFile);
  const catalogueFile = from(settings.catalogueFile);
  return {
    ...settings,
    ...(maintenanceFile === undefined ? {} : { maintenanceFile }),
    ...(catalogueFile === undefined ? {} : { catalogueFile }),
  };
}
