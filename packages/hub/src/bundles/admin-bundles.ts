/**
 * AdminService: bundles (PutObject, ApplyBundle, ListBundles, GetBundle, DeleteBundle, PauseBundle,
 * ResumeBundle, RedeployBundle, RollbackBundle, RenderBundle). Requests
 * are validated before anything is read or written: bad fields are INVALID_ARGUMENT with their
 * path (`bundle.targets[0].clusterSelector`), unknown bundles NOT_FOUND. State-changing calls are
 * audited (targetKind "bundle"; uploads "object").
 */
import { compact } from "@flotilla/core";
import {
  bundleStatusToWire,
  bundleToWire,
  type wire,
} from "@flotilla/protocol";
import { paginate } from "../grpc/pages.js";
import { audited, unary, type AuditDeps } from "../grpc/unary.js";
import { requireName } from "../grpc/admin-fleet.js";
import type { BundleManager } from "./bundle-manager.js";
import { putObjectHandler } from "./put-object.js";
import type { ClusterRender } from "./cluster-render.js";

/** What the bundle handlers need. */
export interface BundleHandlerDeps extends AuditDeps {
  /** The bundles; PutObject stores uploads through it (kept until collected, see storeUpload). */
  readonly bundles: BundleManager;
}

type Handlers = wire.AdminServiceHandlers;

/** The AdminService methods of bundles. */
export type BundleMethod =
  | "PutObject"
  | "ApplyBundle"
  | "ListBundles"
  | "GetBundle"
  | "DeleteBundle"
  | "PauseBundle"
  | "ResumeBundle"
  | "RedeployBundle"
  | "RollbackBundle"
  | "RenderBundle";

function requireBundleName(name: unknown): string {
  return requireName(name, "name", "bundle request");
}

/** RenderBundle's answer. */
function renderToWire(r: ClusterRender): wire.RenderBundleResponse {
  return {
    bundle: r.bundle,
    cluster: r.cluster,
    revision: r.revision,
    targeted: r.notTargeted === undefined,
    notTargeted: r.notTargeted ?? "",
    contentKey: r.contentKey,
    contentDigest: r.contentDigest ?? "",
    ...compact({ customizationIndex: r.customizationIndex }),
    customizationName: r.customizationName ?? "",
    defaultNamespace: r.defaultNamespace,
    targetNamespace: r.targetNamespace,
    helm: r.helm,
    objects: r.objects.map((o) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      namespace: o.metadata.namespace ?? "",
      name: o.metadata.name,
      objectJson: JSON.stringify(o),
    })),
    notes: [...r.notes],
  };
}

/** The AdminService handlers for bundles. */
export function bundleHandlers(
  deps: BundleHandlerDeps,
): Pick<Handlers, BundleMethod> {
  return {
    PutObject: putObjectHandler({
      ...deps,
      publisher: {
        putBundleContent: (content, options) =>
          deps.bundles.storeUpload(content, options),
      },
    }),

    ApplyBundle: unary(
      audited<wire.ApplyBundleRequest__Output, wire.ApplyBundleResponse>(
        deps,
        {
          method: "ApplyBundle",
          targetKind: "bundle",
          targetName: (r) => r.bundle?.name ?? "",
          reason: (r) => r.reason,
        },
        async (request, context) => {
          const result = await deps.bundles.apply(
            request.bundle,
            request.reason,
            {
              signal: context.signal,
            },
          );
          return {
            bundle: bundleToWire(result.bundle),
            changed: result.changed,
            warnings: result.warnings.map((w) => ({
              code: w.code,
              message: w.message,
            })),
          };
        },
      ),
    ),

    ListBundles: unary<
      wire.ListBundlesRequest__Output,
      wire.ListBundlesResponse
    >(async (request) => {
      const all = await deps.bundles.list();
      const page = paginate(
        all,
        (b) => b.record.name,
        request.pageSize,
        request.pageToken,
      );
      return {
        bundles: page.items.map(bundleToWire),
        nextPageToken: page.nextPageToken,
      };
    }),

    GetBundle: unary<wire.GetBundleRequest__Output, wire.GetBundleResponse>(
      async (request) =>
        bundleStatusToWire(
          await deps.bundles.get(requireBundleName(request.name)),
        ),
    ),

    DeleteBundle: unary(
      audited<wire.DeleteBundleRequest__Output, wire.DeleteBundleResponse>(
        deps,
        {
          method: "DeleteBundle",
          targetKind: "bundle",
          targetName: (r) => r.name,
          reason: (r) => r.reason,
        },
        async (request) => {
          await deps.bundles.delete(
            requireBundleName(request.name),
            request.reason,
          );
          return {};
        },
      ),
    ),

    // Read only: not audited (it changes nothing).
    RenderBundle: unary<
      wire.RenderBundleRequest__Output,
      wire.RenderBundleResponse
    >(async (request, context) => {
      const cluster = requireName(request.cluster, "cluster", "render");
      const source =
        request.source === "name" || request.bundle == null
          ? {
              name: requireName(request.name ?? "", "name", "render"),
              revision: request.revision,
            }
          : { spec: request.bundle };
      return renderToWire(
        await deps.bundles.render(cluster, source, { signal: context.signal }),
      );
    }),

    PauseBundle: pauseHandler(deps, "PauseBundle", true),
    ResumeBundle: pauseHandler(deps, "ResumeBundle", false),

    RedeployBundle: unary(
      audited<wire.RedeployBundleRequest__Output, wire.RedeployBundleResponse>(
        deps,
        {
          method: "RedeployBundle",
          targetKind: "bundle",
          targetName: (r) => r.name,
          reason: (r) => r.reason,
        },
        async (request) => {
          const result = await deps.bundles.redeploy(
            requireBundleName(request.name),
            request.clusters,
            request.reason,
          );
          return { bundle: bundleToWire(result.bundle) };
        },
      ),
    ),

    RollbackBundle: unary(
      audited<wire.RollbackBundleRequest__Output, wire.RollbackBundleResponse>(
        deps,
        {
          method: "RollbackBundle",
          targetKind: "bundle",
          targetName: (r) => r.name,
          reason: (r) => r.reason,
        },
        async (request, context) => {
          const result = await deps.bundles.rollback(
            requireBundleName(request.name),
            {
              to: request.toRevision,
              allAtOnce: request.allAtOnce,
              cause: "Manual",
              message: request.reason,
              actor: context.actor,
            },
          );
          return { bundle: bundleToWire(result.bundle) };
        },
      ),
    ),
  };
}

/** PauseBundle or ResumeBundle: the stored `paused`, audited with the caller's reason. */
function pauseHandler(
  deps: BundleHandlerDeps,
  method: "PauseBundle" | "ResumeBundle",
  paused: boolean,
) {
  return unary(
    audited<
      wire.PauseBundleRequest__Output,
      wire.PauseBundleResponse & wire.ResumeBundleResponse
    >(
      deps,
      {
        method,
        targetKind: "bundle",
        targetName: (r) => r.name,
        reason: (r) => r.reason,
      },
      async (request) => {
        const result = await deps.bundles.setPaused(
          requireBundleName(request.name),
          paused,
          request.reason,
        );
        return {
          bundle: bundleToWire(result.bundle),
          changed: result.changed,
        };
      },
    ),
  );
}
