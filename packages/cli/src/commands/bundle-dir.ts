/**
 * Reading a bundle directory the way Fleet lays one out: an optional `fleet.yaml` at the top and
 * every other `*.yaml`, `*.yml` and `*.json` file below it (recursively, hidden entries skipped) as
 * a manifest file, in byte order of their paths so the same directory always sends the same
 * bundle. Helm charts are refused here, before anything is sent. Every problem's path names the
 * file; YAML syntax errors are at `FILE:LINE:COL`.
 */
import { join } from "node:path";
import {
  compareNames,
  fail,
  formatProblem,
  ok,
  type Problem,
  type Result,
} from "@flotilla/core";
import {
  describeReadError,
  fileProblem,
  parseDocumentText,
  yamlStreamErrors,
} from "../input.js";
import type { CliIo } from "../io.js";
import { parseFleetYaml, type FleetYaml } from "./fleet-yaml.js";

/** The descriptor file of a bundle directory. */
export const FLEET_YAML = "fleet.yaml";

/** One manifest file: its path inside the directory (`/`-separated) and its bytes. */
export interface ManifestFile {
  readonly path: string;
  readonly content: Uint8Array;
}

/** A bundle directory, read and checked. */
export interface BundleDir {
  readonly fleet: FleetYaml;
  /** Whether the directory has a fleet.yaml (messages name it only then). */
  readonly hasFleetYaml: boolean;
  readonly manifests: readonly ManifestFile[];
}

const MANIFEST_EXTENSIONS = [".yaml", ".yml", ".json"];

const isManifestName = (name: string): boolean =>
  MANIFEST_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext));

/** The problem refusing a Helm bundle. */
export function helmRefusal(dir: string, found: string): Problem {
  return fileProblem(
    dir,
    `Helm-chart bundles are not supported yet (found ${found}); ` +
      "render the chart to plain manifests (helm template) and apply that directory",
  );
}

/** Relative paths of the manifest files under `dir`, and nested fleet.yaml files (refused). */
async function walk(
  io: CliIo,
  dir: string,
  relative: string,
  found: { manifests: string[]; nested: string[] },
): Promise<void> {
  const entries = await io.readDir(relative === "" ? dir : join(dir, relative));
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
    if (entry.kind === "directory") await walk(io, dir, path, found);
    else if (entry.kind !== "file" || !isManifestName(entry.name)) continue;
    else if (path === FLEET_YAML) continue;
    else if (entry.name === FLEET_YAML) found.nested.push(path);
    else found.manifests.push(path);
  }
}

async function readFleetYaml(
  io: CliIo,
  dir: string,
): Promise<Result<FleetYaml>> {
  const file = join(dir, FLEET_YAML);
  let source: string;
  try {
    source = await io.readFile(file);
  } catch (error) {
    return fail([
      fileProblem(file, `cannot read: ${describeReadError(error)}`),
    ]);
  }
  const doc = parseDocumentText(file, source, { allowEmpty: true });
  if (!doc.ok) return doc;
  if (
    typeof doc.value === "object" &&
    doc.value !== null &&
    "helm" in doc.value
  )
    return fail([helmRefusal(dir, `"helm" in ${FLEET_YAML}`)]);
  const fleet = parseFleetYaml(doc.value);
  if (!fleet.ok)
    return fail(fleet.problems.map((p) => fileProblem(file, formatProblem(p))));
  return fleet;
}

/** Reads and checks bundle directory `dir`; on failure, every problem found. */
export async function readBundleDir(
  io: CliIo,
  dir: string,
): Promise<Result<BundleDir>> {
  let top;
  try {
    top = await io.readDir(dir);
  } catch (error) {
    return fail([
      fileProblem(
        dir,
        `cannot read the bundle directory: ${describeReadError(error)}`,
      ),
    ]);
  }
  if (top.some((e) => e.name === "Chart.yaml"))
    return fail([helmRefusal(dir, "Chart.yaml")]);
  const hasFleetYaml = top.some(
    (e) => e.name === FLEET_YAML && e.kind === "file",
  );
  const problems: Problem[] = [];
  let fleet: FleetYaml = {};
  if (hasFleetYaml) {
    const read = await readFleetYaml(io, dir);
    if (read.ok) fleet = read.value;
    else problems.push(...read.problems);
  }
  const found = { manifests: [] as string[], nested: [] as string[] };
  await walk(io, dir, "", found);
  for (const path of found.nested)
    problems.push(
      fileProblem(
        join(dir, path),
        "a nested fleet.yaml starts another bundle; apply its directory on its own",
      ),
    );
  const manifests: ManifestFile[] = [];
  for (const path of found.manifests.sort(compareNames)) {
    const file = join(dir, path);
    let content: Uint8Array;
    try {
      content = await io.readBytes(file);
    } catch (error) {
      problems.push(
        fileProblem(file, `cannot read: ${describeReadError(error)}`),
      );
      continue;
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(content);
    } catch {
      problems.push(fileProblem(file, "is not UTF-8 text"));
      continue;
    }
    problems.push(...yamlStreamErrors(file, text));
    manifests.push({ path, content });
  }
  if (problems.length === 0 && manifests.length === 0)
    problems.push(
      fileProblem(
        dir,
        `no manifest files (*.yaml, *.yml, *.json) besides ${FLEET_YAML}`,
      ),
    );
  if (problems.length > 0) return fail(problems);
  return ok({ fleet, hasFleetYaml, manifests });
}
