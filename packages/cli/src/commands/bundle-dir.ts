/**
 * Reading a bundle directory the way Fleet lays one out: an optional `fleet.yaml` at the top and
 * every other `*.yaml`, `*.yml` and `*.json` file below it (recursively, hidden entries skipped) as
 * a manifest file, in byte order of their paths so the same directory always sends the same
 * bundle. Helm charts are refused here, before anything is sent. Every problem is a line naming
 * the file; YAML syntax errors are `FILE:LINE:COL: message`.
 */
import { join } from "node:path";
import { compareNames, formatProblem } from "@flotilla/core";
import {
  describeReadError,
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

/** The message refusing a Helm bundle. */
export function helmRefusal(dir: string, found: string): string {
  return (
    `${dir}: Helm-chart bundles are not supported yet (found ${found}); ` +
    "render the chart to plain manifests (helm template) and apply that directory"
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
): Promise<{ ok: true; fleet: FleetYaml } | { ok: false; messages: string[] }> {
  const file = join(dir, FLEET_YAML);
  let source: string;
  try {
    source = await io.readFile(file);
  } catch (error) {
    return {
      ok: false,
      messages: [`${file}: cannot read: ${describeReadError(error)}`],
    };
  }
  const doc = parseDocumentText(file, source, { allowEmpty: true });
  if (!doc.ok) return { ok: false, messages: [...doc.messages] };
  if (
    typeof doc.value === "object" &&
    doc.value !== null &&
    "helm" in doc.value
  )
    return {
      ok: false,
      messages: [helmRefusal(dir, `"helm" in ${FLEET_YAML}`)],
    };
  const fleet = parseFleetYaml(doc.value);
  if (!fleet.ok)
    return {
      ok: false,
      messages: fleet.problems.map((p) => `${file}: ${formatProblem(p)}`),
    };
  return { ok: true, fleet: fleet.value };
}

/** Reads and checks bundle directory `dir`; on failure, every problem found. */
export async function readBundleDir(
  io: CliIo,
  dir: string,
): Promise<
  { ok: true; value: BundleDir } | { ok: false; messages: readonly string[] }
> {
  let top;
  try {
    top = await io.readDir(dir);
  } catch (error) {
    return {
      ok: false,
      messages: [
        `${dir}: cannot read the bundle directory: ${describeReadError(error)}`,
      ],
    };
  }
  if (top.some((e) => e.name === "Chart.yaml"))
    return { ok: false, messages: [helmRefusal(dir, "Chart.yaml")] };
  const hasFleetYaml = top.some(
    (e) => e.name === FLEET_YAML && e.kind === "file",
  );
  const messages: string[] = [];
  let fleet: FleetYaml = {};
  if (hasFleetYaml) {
    const read = await readFleetYaml(io, dir);
    if (read.ok) fleet = read.fleet;
    else messages.push(...read.messages);
  }
  const found = { manifests: [] as string[], nested: [] as string[] };
  await walk(io, dir, "", found);
  for (const path of found.nested)
    messages.push(
      `${join(dir, path)}: a nested fleet.yaml starts another bundle; apply its directory on its own`,
    );
  const manifests: ManifestFile[] = [];
  for (const path of found.manifests.sort(compareNames)) {
    const file = join(dir, path);
    let content: Uint8Array;
    try {
      content = await io.readBytes(file);
    } catch (error) {
      messages.push(`${file}: cannot read: ${describeReadError(error)}`);
      continue;
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(content);
    } catch {
      messages.push(`${file}: is not UTF-8 text`);
      continue;
    }
    messages.push(...yamlStreamErrors(file, text));
    manifests.push({ path, content });
  }
  if (messages.length === 0 && manifests.length === 0)
    messages.push(
      `${dir}: no manifest files (*.yaml, *.yml, *.json) besides ${FLEET_YAML}`,
    );
  if (messages.length > 0) return { ok: false, messages };
  return { ok: true, value: { fleet, hasFleetYaml, manifests } };
}
