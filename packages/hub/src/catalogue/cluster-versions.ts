/**
 * What `flotilla versions` shows of one cluster (docs/cli.md#releases-and-versions): its
 * Kubernetes version and the upgrades it can take (newer, at most one minor ahead, as Kubernetes
 * upgrades), and per node pool its image and the newest image offered to it.
 */
import {
  compareKubernetesVersions,
  compareNodeImageVersions,
  formatKubernetesVersion,
  isOfferedIn,
  kubernetesVersionOf,
  minorDistance,
  newestNodeImageAt,
  type AvailableVersions,
  type Cluster,
} from "@flotilla/core";

export interface KubernetesUpgradeView {
  readonly version: string;
  readonly lts: boolean;
  readonly preview: boolean;
}

export interface PoolVersionsView {
  readonly pool: string;
  readonly imageFamily: string;
  readonly imageVersion: string;
  readonly newestImageVersion?: string;
}

export interface ClusterVersionsView {
  readonly cluster: string;
  readonly kubernetesVersion?: string;
  readonly upgrades: readonly KubernetesUpgradeView[];
  readonly nodePools: readonly PoolVersionsView[];
  readonly reportsCatalogue: boolean;
}

/** The versions view of `cluster` from what is `available` to it. */
export function clusterVersions(
  cluster: Cluster,
  available: AvailableVersions,
  reportsCatalogue: boolean,
): ClusterVersionsView {
  const current = kubernetesVersionOf(cluster.kubernetesVersion);
  const upgrades = new Map<string, KubernetesUpgradeView>();
  for (const offer of available.kubernetes) {
    if (!isOfferedIn(offer, cluster.region, cluster.name)) continue;
    const version = kubernetesVersionOf(offer.version);
    if (version === undefined) continue;
    if (current !== undefined) {
      if (compareKubernetesVersions(version, current) <= 0) continue;
      if (minorDistance(current, version) > 1) continue;
    }
    const key = formatKubernetesVersion(version);
    const seen = upgrades.get(key);
    // The same version from the cluster and from a release: LTS if either says so, GA if either does.
    upgrades.set(key, {
      version: key,
      lts: offer.lts === true || seen?.lts === true,
      preview: offer.preview === true && (seen?.preview ?? true),
    });
  }
  const sorted = [...upgrades.values()].sort((a, b) => {
    const x = kubernetesVersionOf(a.version);
    const y = kubernetesVersionOf(b.version);
    return x === undefined || y === undefined
      ? 0
      : compareKubernetesVersions(y, x);
  });
  return {
    cluster: cluster.name,
    ...(cluster.kubernetesVersion === undefined
      ? {}
      : { kubernetesVersion: cluster.kubernetesVersion }),
    upgrades: sorted,
    nodePools: cluster.nodePools.map((pool): PoolVersionsView => {
      const newest = newestNodeImageAt(available, pool.imageFamily, [
        { region: cluster.region, cluster: cluster.name },
      ]);
      return {
        pool: pool.name,
        imageFamily: pool.imageFamily,
        imageVersion: pool.imageVersion,
        ...(newest !== undefined &&
        compareNodeImageVersions(newest, pool.imageVersion) > 0
          ? { newestImageVersion: newest }
          : {}),
      };
    }),
    reportsCatalogue,
  };
}
