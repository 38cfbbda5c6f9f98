/**
 * What the platform offers over time: a catalogue at one moment ({@link AvailableVersions}) and
 * the releases that change it. A release of a version already offered replaces that offer, so a
 * preview version turns GA, or a version rolls out to more regions, by being released again.
 */
import type {
  AvailableKubernetesVersion,
  AvailableNodeImage,
  AvailableVersions,
} from "./version.js";

/** The catalogue after `release`: its offers replace those of the same version (and family). */
export function withRelease(
  available: AvailableVersions,
  release: AvailableVersions,
): AvailableVersions {
  const kubernetes = new Map<string, AvailableKubernetesVersion>(
    available.kubernetes.map((k) => [k.version, k]),
  );
  for (const k of release.kubernetes) kubernetes.set(k.version, k);
  const key = (n: AvailableNodeImage): string =>
    `${n.family}\u0000${n.version}`;
  const nodeImages = new Map<string, AvailableNodeImage>(
    available.nodeImages.map((n) => [key(n), n]),
  );
  for (const n of release.nodeImages) nodeImages.set(key(n), n);
  return {
    kubernetes: [...kubernetes.values()],
    nodeImages: [...nodeImages.values()],
  };
}

function where(offer: { readonly regions?: readonly string[] }): string {
  return offer.regions === undefined ? "" : ` in ${offer.regions.join(", ")}`;
}

/** One line naming what a release offers: `Kubernetes 1.31.3 in eastus; node image F V`. */
export function describeRelease(release: AvailableVersions): string {
  return [
    ...release.kubernetes.map(
      (k) =>
        `Kubernetes ${k.version}${k.preview === true ? " (preview)" : ""}${k.lts === true ? " (LTS)" : ""}${where(k)}`,
    ),
    ...release.nodeImages.map(
      (n) => `node image ${n.family} ${n.version}${where(n)}`,
    ),
  ].join("; ");
}
