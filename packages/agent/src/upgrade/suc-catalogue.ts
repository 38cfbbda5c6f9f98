/**
 * The version catalogue of a k3s/RKE2 cluster (docs/agent.md#the-version-catalogue): the releases
 * its channel Plans resolved. A system-upgrade-controller Plan with `spec.channel` (a release
 * channel URL such as https://update.k3s.io/v1-release/channels/stable) is resolved by the
 * controller into `status.latestVersion` ("v1.31.4+k3s1"); that version, without the distribution
 * suffix, is what the cluster can move to. Node images: none (k3s/RKE2 nodes carry no image
 * version). No channel Plan: the driver cannot tell (undefined).
 */
import { kubernetesVersionOf } from "@flotilla/core";
import type { VersionCatalogue } from "@flotilla/protocol";
import type { PlatformFacts } from "./driver.js";
import { normalizeVersion, stringAt, type JsonRecord } from "./kube-upgrade.js";

/** The catalogue from the namespace's Plans, or undefined when none follows a channel. */
export function sucCatalogue(
  plans: readonly JsonRecord[],
  platform: PlatformFacts,
): VersionCatalogue | undefined {
  const channels = plans.filter(
    (p) => (stringAt(p, "spec", "channel") ?? "") !== "",
  );
  if (channels.length === 0) return undefined;
  const versions = new Set<string>();
  for (const plan of channels) {
    const version = normalizeVersion(stringAt(plan, "status", "latestVersion"));
    if (version !== undefined && kubernetesVersionOf(version) !== undefined)
      versions.add(version);
  }
  return {
    kubernetes: [...versions].sort().map((version) => ({ version })),
    nodePools: platform.nodePools.map((p) => ({
      pool: p.name,
      imageVersions: [],
    })),
  };
}
