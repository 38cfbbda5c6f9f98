/**
 * A {@link MaintenanceSource} on a local file holding `maintenance:` in the shape core's
 * parseMaintenance accepts (docs/semantics.md#maintenance-windows). Invalid or unreadable content
 * keeps the last valid configuration in force and sets an error condition naming the file, the
 * field path and the value; `reload()` re-reads it and emits WindowsChanged when anything changed.
 */
import {
  fail,
  ok,
  canonicalJson,
  formatProblem,
  formatProblems,
  parseMaintenance,
  type Maintenance,
  type Problem,
  type Result,
  compact,
} from "@flotilla/core";
import type {
  MaintenanceSource,
  MaintenanceState,
  WindowsChanged,
} from "../upgrade/maintenance-source.js";
import { parserFor, readDocument, type TextParser } from "./text-file.js";
import { createListenerSet } from "@flotilla/node";

/** Options of {@link createMaintenanceFile}. */
export interface MaintenanceFileOptions {
  /** Needed for YAML files; see text-file.ts. */
  readonly parseText?: TextParser;
}

/** A file-backed maintenance source; nothing is in force until the first `reload()`. */
export function createMaintenanceFile(
  file: string,
  options: MaintenanceFileOptions = {},
): MaintenanceSource {
  const parse = parserFor(file, options.parseText);
  const listeners = createListenerSet<WindowsChanged>();
  let state: MaintenanceState = {};

  const refuse = (why: string, problems: readonly Problem[]): void => {
    const kept =
      state.maintenance === undefined
        ? "no windows are in force"
        : "the last valid configuration stays in force";
    state = {
      ...compact({ maintenance: state.maintenance }),
      error: {
        source: file,
        message: `Cannot load maintenance windows from "${file}": ${why}; ${kept}`,
        problems,
      },
    };
  };

  return {
    current: () => state,
    async reload(reloadOptions = {}) {
      const before = canonicalJson(state);
      const read = await readDocument(file, parse, reloadOptions);
      if (!read.ok) refuse(formatProblems(read.problems, "; "), []);
      else {
        const parsed = parseDocument(read.value);
        if (parsed.ok) state = compact({ maintenance: parsed.value });
        else
          refuse(
            parsed.problems.map(formatProblem).join("; "),
            parsed.problems,
          );
      }
      if (canonicalJson(state) !== before) {
        const event: WindowsChanged = { type: "WindowsChanged", state };
        listeners.emit(event);
      }
      return state;
    },
    watch(listener, watchOptions = {}) {
      return listeners.add(listener, watchOptions);
    },
  };
}

type Parsed = Result<Maintenance | undefined>;

/** `{maintenance: …}`; an empty document or one without `maintenance` means no constraints. */
function parseDocument(raw: unknown): Parsed {
  if (raw === null || raw === undefined) return ok(undefined);
  if (typeof raw !== "object" || Array.isArray(raw))
    return fail([
      {
        path: "",
        message: "must be an object with a maintenance field",
        value: raw,
      },
    ]);
  const unknown = Object.keys(raw)
    .filter((k) => k !== "maintenance")
    .map((k): Problem => ({
      path: k,
      message: "unknown field (known fields: maintenance)",
    }));
  const block = (raw as Record<string, unknown>).maintenance;
  if (block === undefined || block === null)
    return unknown.length > 0 ? fail(unknown) : ok(undefined);
  const parsed = parseMaintenance(block, "maintenance");
  if (!parsed.ok) return fail([...unknown, ...parsed.problems]);
  return unknown.length > 0 ? fail(unknown) : ok(parsed.value);
}
