/**
 * A bundle's revision and the content each cluster receives.
 *
 * The revision is a short hash of everything that decides what a cluster receives: the Kubernetes
 * objects, the default namespace and the target customizations. Changing targets, the rollout
 * strategy or `paused` changes who gets it and how fast, not what they get, so it keeps the
 * revision (as Fleet's DeploymentID, which hashes manifests and per-cluster options). Applying
 * the same content again gives the same revision: nothing rolls out.
 *
 * Content is one protocol `BundleContent` per distinct default namespace (the bundle's, and each
 * customization's), so clusters with the same customization share one digest.
 */
import { canonicalJson, type FleetBundleSpec } from "@flotilla/core";
import {
  encodeBundleContent,
  sha256Digest,
  type KubernetesObject,
} from "@flotilla/protocol";

/** Hex digits of the revision: 64 bits of SHA-256, collision-free for any one bundle's history. */
const REVISION_HEX_DIGITS = 16;

/** The revision of `objects` under `namespace` with `targetCustomizations` (the parsed JSON). */
export function bundleRevision(
  objects: readonly KubernetesObject[],
  namespace: string,
  targetCustomizations: unknown,
): string {
  const text = canonicalJson({
    resources: objects,
    namespace,
    targetCustomizations: targetCustomizations ?? [],
  });
  return sha256Digest(text).slice(
    "sha256:".length,
    "sha256:".length + REVISION_HEX_DIGITS,
  );
}

/** Every default namespace a target of `spec` can get: the bundle's and each deploying customization's. */
export function contentNamespaces(spec: FleetBundleSpec): string[] {
  const namespaces = new Set<string>([spec.namespace]);
  for (const c of spec.targetCustomizations) {
    if (!c.doNotDeploy) namespaces.add(c.namespace ?? spec.namespace);
  }
  return [...namespaces].sort();
}

/** The encoded content of one revision for clusters whose default namespace is `namespace`. */
export function renderContent(
  bundle: string,
  revision: string,
  namespace: string,
  objects: readonly KubernetesObject[],
): Uint8Array {
  return encodeBundleContent({
    apiVersion: "flotilla.dev/v1",
    kind: "BundleContent",
    bundle,
    revision,
    namespace,
    resources: objects,
  });
}
