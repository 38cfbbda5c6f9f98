/**
 * Reading the Helm charts in deploy/helm without helm: a chart's files, values merged the way Helm
 * merges them, the `.Values` paths its templates reference, and the block structure of its
 * template actions. charts.test.ts checks the charts with these; helm.ts renders them with a real
 * helm, and installing them needs a cluster (test/e2e-kind/run.sh).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";

/** The repository's root directory. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A chart as files: Chart.yaml, values, schema, templates and example values by file name. */
export interface ChartFiles {
  readonly name: string;
  readonly dir: string;
  readonly chart: Record<string, unknown>;
  readonly values: Record<string, unknown>;
  readonly schema: Record<string, unknown>;
  readonly templates: ReadonlyMap<string, string>;
  readonly examples: ReadonlyMap<string, Record<string, unknown>>;
}

function readYamlObject(file: string): Record<string, unknown> {
  const parsed: unknown = parseYaml(readFileSync(file, "utf8"));
  if (!isObject(parsed))
    throw new Error(`Cannot read "${file}": expected a YAML mapping`);
  return parsed;
}

/** True for a plain (non-array, non-null) object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Reads deploy/helm/NAME. */
export function readChart(name: string): ChartFiles {
  const dir = join(ROOT, "deploy", "helm", name);
  const listing = (sub: string): string[] => readdirSync(join(dir, sub)).sort();
  const templates = new Map(
    listing("templates").map((file) => [
      file,
      readFileSync(join(dir, "templates", file), "utf8"),
    ]),
  );
  const examples = new Map(
    listing("examples")
      .filter((file) => file.endsWith(".yaml"))
      .map((file) => [file, readYamlObject(join(dir, "examples", file))]),
  );
  const schema: unknown = JSON.parse(
    readFileSync(join(dir, "values.schema.json"), "utf8"),
  );
  if (!isObject(schema))
    throw new Error(`Cannot read the schema of "${name}": not an object`);
  return {
    name,
    dir,
    chart: readYamlObject(join(dir, "Chart.yaml")),
    values: readYamlObject(join(dir, "values.yaml")),
    schema,
    templates,
    examples,
  };
}

/**
 * Helm's merge of user values over the chart's: maps merge key by key, anything else replaces,
 * and a null removes the key.
 */
export function mergeValues(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const merged = new Map(Object.entries(base));
  for (const [key, value] of Object.entries(over)) {
    const current = merged.get(key);
    if (value === null) merged.delete(key);
    else if (isObject(value) && isObject(current))
      merged.set(key, mergeValues(current, value));
    else merged.set(key, value);
  }
  return Object.fromEntries(merged);
}

/** Every `.Values.a.b` (or `$.Values.a.b`) path a template names, as "a.b". */
export function valuesPaths(template: string): string[] {
  const found = template.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g);
  return [...found].map((match) => (match[1] ?? "").slice(1));
}

/** Whether `path` ("a.b.c") leads through objects of `values` to a key that is present. */
export function hasPath(values: unknown, path: string): boolean {
  let at: unknown = values;
  for (const key of path.split(".")) {
    if (!isObject(at) || !(key in at)) return false;
    at = at[key];
  }
  return true;
}

/** Every path of `values` down to its leaves (arrays and empty maps are leaves). */
export function leafPaths(
  values: Record<string, unknown>,
  prefix = "",
): string[] {
  return Object.entries(values).flatMap(([key, value]) => {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    return isObject(value) && Object.keys(value).length > 0
      ? leafPaths(value, path)
      : [path];
  });
}

/** The template actions of a file, `{{ … }}` without delimiters and trim markers. */
function actions(template: string): string[] {
  const found = template.matchAll(/\{\{-?\s*([\s\S]*?)\s*-?\}\}/g);
  return [...found]
    .map((match) => match[1] ?? "")
    .filter((action) => !action.startsWith("/*"));
}

const OPENERS = new Set(["if", "range", "with", "define", "block"]);

/**
 * Problems with the nesting of `if`/`range`/`with`/`define` and `end`: an `end` with nothing
 * open, an `else` outside a block, or blocks left open. Empty when the structure is sound.
 */
export function blockProblems(template: string): string[] {
  const open: string[] = [];
  const problems: string[] = [];
  for (const action of actions(template)) {
    const word = /^[a-z]+/.exec(action)?.[0] ?? "";
    if (OPENERS.has(word)) open.push(action);
    else if (word === "else" && open.length === 0)
      problems.push(`"${action}" outside any block`);
    else if (word === "end" && open.pop() === undefined)
      problems.push(`"end" with no open block`);
  }
  for (const action of open) problems.push(`"${action}" is never ended`);
  return problems;
}

/** Names given to `define` in a chart's templates. */
export function definedNames(templates: Iterable<string>): Set<string> {
  const names = new Set<string>();
  for (const text of templates)
    for (const match of text.matchAll(/\{\{-?\s*define\s+"([^"]+)"/g))
      names.add(match[1] ?? "");
  return names;
}

/** Names a template passes to `include` or `template`. */
export function includedNames(template: string): string[] {
  const found = template.matchAll(/\b(?:include|template)\s+"([^"]+)"/g);
  return [...found].map((match) => match[1] ?? "");
}

/** Environment variables a template sets (`- name: FLOTILLA_…`). */
export function envNames(template: string): string[] {
  const found = template.matchAll(/-\s+name:\s+(FLOTILLA_[A-Z0-9_]+)/g);
  return [...found].map((match) => match[1] ?? "");
}

/** `FLOTILLA_…` variable names quoted in a source file (a binary's config module). */
export function variablesIn(file: string): Set<string> {
  const text = readFileSync(join(ROOT, file), "utf8");
  return new Set(
    [...text.matchAll(/"(FLOTILLA_[A-Z0-9_]+)"/g)].map((m) => m[1] ?? ""),
  );
}

/** Absolute file paths a template gives as env values, and the mount paths of its volumes. */
export function filesAndMounts(template: string): {
  files: string[];
  mounts: string[];
} {
  const files = [...template.matchAll(/^\s+value:\s+(\/[^\s"]+)\s*$/gm)].map(
    (m) => m[1] ?? "",
  );
  const mounts = [...template.matchAll(/mountPath:\s+(\/[^\s"]+)/g)].map(
    (m) => m[1] ?? "",
  );
  return { files, mounts };
}
