/**
 * AdminService: the version catalogue (docs/engine.md#the-version-catalogue). Operators publish and
 * remove releases (audited, like every write); anyone may list them and see what each cluster can
 * upgrade to (`flotilla versions`).
 */
import { FlotillaError, showValue } from "@flotilla/core";
import { RELEASE_KIND, type wire } from "@flotilla/protocol";
import type { ClusterDirectory } from "../clusters/cluster-directory.js";
import type { HubCatalogue } from "../catalogue/hub-catalogue.js";
import { clusterVersions } from "../catalogue/cluster-versions.js";
import {
  releaseId,
  validateRelease,
  type Release,
  type Releases,
} from "../catalogue/releases.js";
import type { Handlers } from "./admin-run-common.js";
import { audited, unary, type AuditDeps } from "./unary.js";

export interface CatalogueHandlerDeps extends AuditDeps {
  readonly releases: Releases;
  readonly catalogue: HubCatalogue;
  readonly directory: ClusterDirectory;
}

function releaseToWire(release: Release): wire.Release {
  return {
    kind: RELEASE_KIND.toWire(release.kind),
    version: release.version,
    family: release.kind === "node-image" ? release.family : "",
    lts: release.kind === "kubernetes" && release.lts === true,
    preview: release.kind === "kubernetes" && release.preview === true,
    addedAtMs: release.addedAtMs,
    addedBy: release.addedBy,
  };
}

/** The release kind of a request; INVALID_ARGUMENT naming `kind` when it is not one. */
function kindOf(raw: unknown): string {
  const kind = RELEASE_KIND.fromWire(raw);
  if (kind === undefined)
    throw FlotillaError.invalid("release", [
      {
        path: "kind",
        message: `must be one of ${RELEASE_KIND.values.map((v) => RELEASE_KIND.toWire(v)).join(", ")}`,
        value: raw,
      },
    ]);
  return kind;
}

const auditTarget = <
  R extends { kind: unknown; version: string; family: string; reason: string },
>(
  method: string,
) => ({
  method,
  targetKind: "release",
  targetName: (r: R) =>
    releaseId({
      kind: RELEASE_KIND.fromWire(r.kind) ?? String(r.kind),
      version: r.version,
      family: r.family,
    }),
  reason: (r: R) => r.reason,
});

export function catalogueHandlers(
  deps: CatalogueHandlerDeps,
): Pick<
  Handlers,
  "AddRelease" | "RemoveRelease" | "ListReleases" | "ListClusterVersions"
> {
  return {
    AddRelease: unary(
      audited(
        deps,
        auditTarget<wire.AddReleaseRequest__Output>("AddRelease"),
        async (request, context) => {
          const release = validateRelease(
            {
              kind: kindOf(request.kind),
              version: request.version,
              family: request.family,
              lts: request.lts,
              preview: request.preview,
            },
            deps.directory.clusters(),
            context.actor,
            deps.now(),
          );
          await deps.releases.add(release);
          return { release: releaseToWire(release) };
        },
      ),
    ),

    RemoveRelease: unary(
      audited(
        deps,
        auditTarget<wire.RemoveReleaseRequest__Output>("RemoveRelease"),
        async (request) => {
          const kind = kindOf(request.kind);
          const removed = await deps.releases.remove({
            kind,
            version: request.version,
            family: request.family,
          });
          return { release: releaseToWire(removed) };
        },
      ),
    ),

    ListReleases: unary(() => ({
      releases: deps.releases.list().map(releaseToWire),
    })),

    ListClusterVersions: unary((request) => {
      const clusters =
        request.cluster === ""
          ? deps.directory.clusters()
          : [deps.directory.cluster(request.cluster)].filter(
              (c) => c !== undefined,
            );
      if (request.cluster !== "" && clusters.length === 0)
        throw new FlotillaError(
          "not_found",
          `Cluster ${showValue(request.cluster)} is not registered`,
        );
      return {
        clusters: clusters.map((cluster): wire.ClusterVersions => {
          const view = clusterVersions(
            cluster,
            deps.catalogue.available([cluster.name]),
            deps.catalogue.reported(cluster.name) !== undefined,
          );
          return {
            cluster: view.cluster,
            ...(view.kubernetesVersion === undefined
              ? {}
              : { kubernetesVersion: view.kubernetesVersion }),
            upgrades: view.upgrades.map((u) => ({ ...u })),
            nodePools: view.nodePools.map((p) => ({ ...p })),
            reportsCatalogue: view.reportsCatalogue,
          };
        }),
      };
    }),
  };
}
