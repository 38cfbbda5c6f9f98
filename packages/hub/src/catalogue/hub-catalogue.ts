/**
 * The hub's {@link FleetCatalogue} (docs/engine.md#the-version-catalogue): each cluster's own
 * catalogue, as its agent last reported it with its facts (stored in the cluster's record, so
 * every replica has it), restricted to that cluster; plus the operator's releases, which apply to
 * every cluster. Listeners hear a change only when what is offered changed.
 */
import {
  canonicalJson,
  type AvailableKubernetesVersion,
  type AvailableNodeImage,
  type AvailableVersions,
  type Cluster,
} from "@flotilla/core";
import type { ClusterFacts } from "@flotilla/protocol";
import type { FleetCatalogue } from "./fleet-catalogue.js";
import type { Releases } from "./releases.js";

/** What the catalogue reads about the fleet (the cluster registry). */
export interface CatalogueFleet {
  clusters(): readonly Cluster[];
  factsOf(name: string): ClusterFacts | undefined;
  onChange(
    listener: (change: {
      readonly type: string;
      readonly cluster: string;
    }) => void,
  ): () => void;
}

/** The hub's catalogue, with what `flotilla versions` needs beside the port. */
export interface HubCatalogue extends FleetCatalogue {
  /** The catalogue the cluster's agent last reported; undefined when it reported none. */
  reported(cluster: string): ClusterFacts["catalogue"];
  /**
   * Takes the catalogues of the clusters known now as the starting point (call once the fleet is
   * loaded): later changes are measured against them.
   */
  prime(): void;
  /** Stops listening to the fleet and the releases. */
  close(): void;
}

function cataloguePart(facts: ClusterFacts | undefined): string {
  if (facts?.catalogue === undefined) return "";
  // Pool families matter too: a pool's offers are of its family.
  return canonicalJson({
    catalogue: facts.catalogue,
    families: facts.nodePools.map((p) => [p.name, p.imageFamily]),
  });
}

export function createHubCatalogue(deps: {
  readonly fleet: CatalogueFleet;
  readonly releases: Releases;
}): HubCatalogue {
  const listeners = new Set<() => void>();
  const seen = new Map<string, string>();
  const changed = (): void => {
    for (const listener of [...listeners]) listener();
  };
  const stopFleet = deps.fleet.onChange(({ type, cluster }) => {
    // Only these change facts; reachability and windows are frequent and never change offers.
    if (type !== "joined" && type !== "changed" && type !== "left") return;
    const part = cataloguePart(deps.fleet.factsOf(cluster));
    if ((seen.get(cluster) ?? "") === part) return;
    if (part === "") seen.delete(cluster);
    else seen.set(cluster, part);
    changed();
  });
  const stopReleases = deps.releases.onChange(changed);

  const available = (clusters?: readonly string[]): AvailableVersions => {
    const names =
      clusters === undefined
        ? deps.fleet.clusters().map((c) => c.name)
        : [...new Set(clusters)];
    // Offers keyed by what they offer; the clusters each reaches.
    const kube = new Map<
      string,
      { offer: AvailableKubernetesVersion; to: string[] }
    >();
    const images = new Map<
      string,
      { offer: AvailableNodeImage; to: string[] }
    >();
    for (const name of names) {
      const facts = deps.fleet.factsOf(name);
      const catalogue = facts?.catalogue;
      if (facts === undefined || catalogue === undefined) continue;
      for (const k of catalogue.kubernetes) {
        const offer: AvailableKubernetesVersion = {
          version: k.version,
          ...(k.lts === true ? { lts: true } : {}),
          ...(k.preview === true ? { preview: true } : {}),
        };
        const key = canonicalJson(offer);
        const found = kube.get(key);
        if (found === undefined) kube.set(key, { offer, to: [name] });
        else found.to.push(name);
      }
      for (const pool of catalogue.nodePools) {
        const family = facts.nodePools.find(
          (p) => p.name === pool.pool,
        )?.imageFamily;
        if (family === undefined) continue;
        for (const version of pool.imageVersions) {
          const key = `${family}\u0000${version}`;
          const found = images.get(key);
          if (found === undefined)
            images.set(key, { offer: { family, version }, to: [name] });
          else if (!found.to.includes(name)) found.to.push(name);
        }
      }
    }
    // An offer reaching every cluster asked about needs no restriction (keeps stored runs small).
    const restrict = <T>(entry: { offer: T; to: string[] }): T =>
      entry.to.length === names.length
        ? entry.offer
        : { ...entry.offer, clusters: [...entry.to].sort() };
    const released = deps.releases.list();
    return {
      kubernetes: [
        ...[...kube.values()].map(restrict),
        ...released.flatMap((r): AvailableKubernetesVersion[] =>
          r.kind === "kubernetes"
            ? [
                {
                  version: r.version,
                  ...(r.lts === true ? { lts: true } : {}),
                  ...(r.preview === true ? { preview: true } : {}),
                },
              ]
            : [],
        ),
      ],
      nodeImages: [
        ...[...images.values()].map(restrict),
        ...released.flatMap((r): AvailableNodeImage[] =>
          r.kind === "node-image"
            ? [{ family: r.family, version: r.version }]
            : [],
        ),
      ],
    };
  };

  return {
    available,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    reported: (cluster) => deps.fleet.factsOf(cluster)?.catalogue,
    prime() {
      seen.clear();
      for (const { name } of deps.fleet.clusters()) {
        const part = cataloguePart(deps.fleet.factsOf(name));
        if (part !== "") seen.set(name, part);
      }
    },
    close() {
      stopFleet();
      stopReleases();
    },
  };
}
