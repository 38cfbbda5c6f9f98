/**
 * The owner's `windows.yaml` (the key of the maintenance ConfigMap,
 * docs/semantics.md#maintenance-windows): a YAML document
 * `maintenance: {kubernetes, nodeImage, workloads, freezes}` in the shape core's parseMaintenance
 * accepts, or `maintenance: null` / an empty document for "any time". Parsing reports every problem
 * with its field path; editing (`withFreeze`, `withoutFreezes`) goes through the YAML document
 * model so the owner's comments and layout survive.
 */
import {
  boundsProblems,
  parseMaintenance,
  tooDeepProblem,
  type Maintenance,
  type Problem,
  type Result,
  compact,
  fail,
  ok,
} from "@flotilla/core";
import { isMap, isSeq, parseDocument, type Document } from "yaml";

/** The ConfigMap key holding the document. */
export const WINDOWS_KEY = "windows.yaml";

function problem(path: string, message: string, value?: unknown): Problem {
  return value === undefined ? { path, message } : { path, message, value };
}

function yamlDocument(text: string): Result<Document> {
  const doc = parseDocument(text, { prettyErrors: false });
  // The parser gives up on deep nesting when its stack runs out: say what the limit is instead.
  if (doc.errors.some((e) => e.code === "RESOURCE_EXHAUSTION"))
    return fail([tooDeepProblem("")]);
  const error = doc.errors[0];
  if (error !== undefined)
    return fail([problem("", `not valid YAML: ${error.message}`)]);
  return ok(doc);
}

/** The document's value within core's input bounds (nesting depth, refused keys). */
function boundedValue(doc: Document): Result<unknown> {
  let raw: unknown;
  try {
    raw = doc.toJS();
  } catch (error) {
    if (error instanceof RangeError) return fail([tooDeepProblem("")]);
    throw error;
  }
  const problems = boundsProblems(raw, "");
  return problems.length > 0 ? fail(problems) : ok(raw);
}

/** The configuration in `text`; undefined means no constraints ("any time"). */
export function parseWindowsDocument(
  text: string,
): Result<Maintenance | undefined> {
  const doc = yamlDocument(text);
  if (!doc.ok) return doc;
  const bounded = boundedValue(doc.value);
  if (!bounded.ok) return bounded;
  const raw = bounded.value;
  if (raw === null || raw === undefined) return ok(undefined);
  if (typeof raw !== "object" || Array.isArray(raw))
    return fail([
      problem("", "must be a mapping with a maintenance field", raw),
    ]);
  const unknown = Object.keys(raw)
    .filter((k) => k !== "maintenance")
    .map((k) => problem(k, "unknown field (known fields: maintenance)"));
  const block = (raw as Record<string, unknown>).maintenance;
  const parsed =
    block === undefined || block === null
      ? undefined
      : parseMaintenance(block, "maintenance");
  const problems = [
    ...unknown,
    ...(parsed?.ok === false ? parsed.problems : []),
  ];
  if (problems.length > 0) return fail(problems);
  return ok(parsed?.ok === true ? parsed.value : undefined);
}

/** A freeze as the owner writes it. */
export interface FreezeInput {
  /** Date `YYYY-MM-DD` or timestamp, as core's freeze schema reads them. */
  readonly start: string;
  readonly end: string;
  readonly scopes?: readonly string[];
  readonly reason?: string;
}

/** `text` with `freeze` appended to `maintenance.freezes`; problems when `text` is not YAML or not a mapping. */
export function withFreeze(text: string, freeze: FreezeInput): Result<string> {
  const parsed = yamlDocument(text);
  if (!parsed.ok) return parsed;
  const doc = parsed.value;
  const entry = {
    start: freeze.start,
    end: freeze.end,
    ...(freeze.scopes === undefined ? {} : { scopes: [...freeze.scopes] }),
    ...compact({ reason: freeze.reason }),
  };
  if (doc.contents === null) doc.contents = doc.createNode({});
  if (!isMap(doc.contents))
    return fail([problem("", "must be a mapping with a maintenance field")]);
  const block = doc.get("maintenance");
  if (!isMap(block)) {
    if (block !== null && block !== undefined)
      return fail([problem("maintenance", "must be a mapping", doc.toJS())]);
    doc.set("maintenance", doc.createNode({ freezes: [entry] }));
  } else {
    const freezes = block.get("freezes");
    if (isSeq(freezes)) freezes.add(doc.createNode(entry));
    else block.set("freezes", doc.createNode([entry]));
  }
  return ok(doc.toString());
}

/** `text` without `maintenance.freezes` (windows kept); unchanged when it has none. */
export function withoutFreezes(text: string): Result<string> {
  const parsed = yamlDocument(text);
  if (!parsed.ok) return parsed;
  const doc = parsed.value;
  const block = isMap(doc.contents) ? doc.get("maintenance") : undefined;
  if (isMap(block)) block.delete("freezes");
  return ok(doc.toString());
}

/** The document that allows any time. */
export const ANY_TIME_DOCUMENT =
  "# No windows: any time is allowed (flotilla-agent windows clear).\nmaintenance: null\n";
