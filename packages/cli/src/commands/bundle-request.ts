/**
 * From a bundle directory to the ApplyBundle request: the fleet.yaml fields as the user's JSON,
 * the manifests and renderer input files inline while they fit MAX_INLINE_MANIFEST_BYTES (the largest files go through
 * PutObject first until the rest fits), and the hub's problem paths mapped back to the file and
 * fleet.yaml field they are about.
 */
import { join } from "node:path";
import { formatProblem, type Problem } from "@flotilla/core";
import {
  bundleSpec,
  filesToUpload,
  type BundleSettings,
  type wire,
} from "@flotilla/protocol";
import type { HubClient } from "../hub/hub-client.js";
import type { ProblemLines } from "../hub/hub-errors.js";
import { putObject } from "../hub/put-object.js";
import { stripField } from "../hub/file-problems.js";
import { FLEET_YAML, type BundleDir } from "./bundle-dir.js";

export { bundleSpec, filesToUpload, type BundleSettings };

/**
 * The BundleSpec of `dir` as sent to the hub: the files {@link filesToUpload} picks uploaded with
 * PutObject first (`uploaded` counts them), the rest inline.
 */
export async function sendableSpec(
  hub: HubClient,
  dir: BundleDir,
  settings: BundleSettings,
): Promise<{ readonly bundle: wire.BundleSpec; readonly uploaded: number }> {
  const all = [...dir.manifests, ...dir.files];
  const upload = filesToUpload(all);
  const objects = new Map<string, wire.ObjectRef__Output>();
  for (const m of all)
    if (upload.has(m.path))
      objects.set(m.path, await putObject(hub, m.content));
  const bundle = bundleSpec(dir, settings, (m) => {
    const object = objects.get(m.path);
    return object === undefined ? { yaml: m.content } : { object };
  });
  return { bundle, uploaded: upload.size };
}

// Request fields → the fleet.yaml key they carry.
const FLEET_FIELDS: readonly (readonly [string, string])[] = [
  ["targetsJson", "targets"],
  ["targets_json", "targets"],
  ["targetCustomizationsJson", "targetCustomizations"],
  ["target_customizations_json", "targetCustomizations"],
  ["rolloutStrategyJson", "rolloutStrategy"],
  ["rollout_strategy_json", "rolloutStrategy"],
  ["targets", "targets"],
  ["targetCustomizations", "targetCustomizations"],
  ["rolloutStrategy", "rolloutStrategy"],
  ["defaultNamespace", "defaultNamespace"],
  ["default_namespace", "defaultNamespace"],
  ["targetNamespace", "namespace"],
  ["target_namespace", "namespace"],
  ["namespace", "namespace"],
  ["paused", "paused"],
  ["helmJson", "helm"],
  ["helm_json", "helm"],
  ["helm", "helm"],
  ["kustomizeJson", "kustomize"],
  ["kustomize_json", "kustomize"],
  ["kustomize", "kustomize"],
  ["labels", "labels"],
  ["dependsOnJson", "dependsOn"],
  ["depends_on_json", "dependsOn"],
  ["dependsOn", "dependsOn"],
  ["correctDriftJson", "correctDrift"],
  ["correct_drift_json", "correctDrift"],
  ["correctDrift", "correctDrift"],
  ["namespaceLabelsJson", "namespaceLabels"],
  ["namespace_labels_json", "namespaceLabels"],
  ["namespaceLabels", "namespaceLabels"],
  ["namespaceAnnotationsJson", "namespaceAnnotations"],
  ["namespace_annotations_json", "namespaceAnnotations"],
  ["namespaceAnnotations", "namespaceAnnotations"],
];

/**
 * Prints the hub's problems against what they are about: `DIR/fleet.yaml: targets[0]…` for the
 * fleet.yaml fields, `DIR/FILE: …` for a manifest, `--name` / `--update-strategy` for flags.
 */
export function bundleProblemLines(
  dirPath: string,
  dir: BundleDir,
  nameFrom: "flag" | "fleet.yaml" | "directory",
): ProblemLines {
  const fleetFile = join(dirPath, FLEET_YAML);
  const line = (p: Problem): string => {
    const path = stripField(p.path, ["bundle", "spec"]) ?? p.path;
    const manifest = /^(manifests|files)\[(\d+)\](.*)$/.exec(path);
    if (manifest !== null) {
      const list = manifest[1] === "files" ? dir.files : dir.manifests;
      const file = list[Number(manifest[2])]?.path;
      const rest = (manifest[3] ?? "").replace(/^\./, "");
      if (file !== undefined)
        return `${join(dirPath, file)}: ${formatProblem({ ...p, path: rest })}`;
    }
    for (const [field, key] of FLEET_FIELDS) {
      const rest = stripField(path, [field]);
      if (rest !== undefined) {
        const inFile =
          rest === ""
            ? key
            : rest.startsWith("[")
              ? key + rest
              : `${key}.${rest}`;
        return `${dir.hasFleetYaml ? fleetFile : `${FLEET_YAML} (none in ${dirPath})`}: ${formatProblem({ ...p, path: inFile })}`;
      }
    }
    const name = stripField(path, ["name"]);
    if (name !== undefined) {
      const where =
        nameFrom === "flag"
          ? "--name"
          : nameFrom === "fleet.yaml"
            ? `${fleetFile}: name`
            : `bundle name (from the directory ${dirPath})`;
      return `${where}: ${formatProblem({ ...p, path: name })}`;
    }
    const strategy = stripField(path, [
      "updateStrategyName",
      "update_strategy_name",
    ]);
    if (strategy !== undefined)
      return `--update-strategy: ${formatProblem({ ...p, path: strategy })}`;
    return formatProblem({ ...p, path });
  };
  return (problems) => problems.map(line);
}
