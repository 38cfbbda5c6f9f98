/**
 * From a bundle directory (core's BundleDir, read by @flotilla/node's readBundleDir) to the wire
 * BundleSpec of ApplyBundle: the fleet.yaml fields as the user's JSON, manifests and renderer input
 * files inline or as stored objects. The CLI sends it to the hub; the hub builds the same spec from
 * a git checkout (docs/gitops.md) and applies it through the same validation.
 */
import type { BundleDir, ManifestFile } from "@flotilla/core";
import { MAX_INLINE_MANIFEST_BYTES } from "./limits.js";
import type * as wire from "./generated/index.js";

/**
 * The files (manifests and renderer input files: paths are unique across both, as they are paths
 * of one directory) to upload first, so that the inline rest stays within the limit.
 */
export function filesToUpload(manifests: readonly ManifestFile[]): Set<string> {
  const upload = new Set<string>();
  let inline = manifests.reduce((sum, m) => sum + m.content.byteLength, 0);
  const bySize = [...manifests].sort(
    (a, b) => b.content.byteLength - a.content.byteLength,
  );
  for (const m of bySize) {
    if (inline <= MAX_INLINE_MANIFEST_BYTES) break;
    upload.add(m.path);
    inline -= m.content.byteLength;
  }
  return upload;
}

/** Where the bundle's settings come from, for the spec. */
export interface BundleSettings {
  readonly name: string;
  /** A stored strategy to roll out with (staged), instead of fleet.yaml's rolloutStrategy. */
  readonly updateStrategy?: string;
}

/** The BundleSpec, given each manifest's content field (inline bytes or an uploaded object). */
export function bundleSpec(
  dir: BundleDir,
  settings: BundleSettings,
  content: (m: ManifestFile) => Pick<wire.Manifest, "yaml" | "object">,
): wire.BundleSpec {
  const { fleet } = dir;
  const json = (value: unknown): string =>
    value === undefined ? "" : JSON.stringify(value);
  return {
    name: settings.name,
    defaultNamespace: fleet.defaultNamespace ?? "",
    targetNamespace: fleet.namespace ?? "",
    manifests: dir.manifests.map((m) => ({ path: m.path, ...content(m) })),
    files: dir.files.map((m) => ({ path: m.path, ...content(m) })),
    targetsJson: json(fleet.targets),
    targetCustomizationsJson: json(fleet.targetCustomizations),
    ...(settings.updateStrategy !== undefined
      ? { updateStrategyName: settings.updateStrategy }
      : fleet.rolloutStrategy === undefined
        ? {}
        : { rolloutStrategyJson: JSON.stringify(fleet.rolloutStrategy) }),
    paused: fleet.paused ?? false,
    helmJson: json(fleet.helm),
    kustomizeJson: json(fleet.kustomize),
    labels: { ...fleet.labels },
    dependsOnJson: json(fleet.dependsOn),
    correctDriftJson: json(fleet.correctDrift),
    namespaceLabelsJson: json(fleet.namespaceLabels),
    namespaceAnnotationsJson: json(fleet.namespaceAnnotations),
  };
}
