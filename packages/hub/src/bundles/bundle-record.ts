/**
 * How a bundle is stored (collection "bundles", key = its name): the spec as the operator gave it,
 * with every manifest and renderer input file as a reference into the object store (never the bytes), the current
 * revision, and the content digest agents fetch for each content variant the bundle's target
 * customizations produce (keyed by default namespace, or `namespace#c<index>` for a customization
 * with patches: bundle-render.ts). Releases only need the digest, so a restarted hub resumes without
 * reading manifests again.
 */
import type { BundleRecord } from "@flotilla/protocol";
import { z } from "zod";
import { nameKey } from "../store/keys.js";
import { defineCollection } from "../store/state-store.js";

/** The redeploy counter of `cluster`'s copy of the bundle (docs/semantics.md#redeploying-a-bundle). */
export function forceSyncOf(record: BundleRecord, cluster: string): number {
  return (
    (record.forceSyncGeneration ?? 0) +
    (record.forceSyncClusters?.[cluster] ?? 0)
  );
}

export type {
  BundleDriver,
  BundleRecord,
  ManifestRef,
} from "@flotilla/protocol";

/**
 * The content digests of `revision` by content key: the current revision's, or that of the run
 * driving the bundle (docs/semantics.md#staged-bundle-runs); undefined for any other.
 */
export function contentsOf(
  record: BundleRecord,
  revision: string,
): Readonly<Record<string, string>> | undefined {
  if (revision === record.revision) return record.contents;
  if (revision === record.drivenBy?.revision) return record.drivenBy.contents;
  return undefined;
}

const refSchema = z.object({
  path: z.string(),
  digest: z.string(),
  sizeBytes: z.number(),
});

const contentFieldsSchema = {
  namespace: z.string(),
  defaultNamespace: z.string().optional(),
  targetNamespace: z.string().optional(),
  manifests: z.array(refSchema),
  files: z.array(refSchema).optional(),
  helmJson: z.string().optional(),
  kustomizeJson: z.string().optional(),
  namespaceLabelsJson: z.string().optional(),
  namespaceAnnotationsJson: z.string().optional(),
  targetCustomizationsJson: z.string(),
  revision: z.string(),
  contents: z.record(z.string(), z.string()),
};

// Records written before revision history have none of these: they parse as a bundle that keeps
// no earlier revision (docs/semantics.md#rolling-back-a-bundle).
const historySchema = {
  storedAtMs: z.number().optional(),
  readyAtMs: z.number().optional(),
  history: z
    .array(
      z.object({
        ...contentFieldsSchema,
        storedAtMs: z.number(),
        readyAtMs: z.number().optional(),
      }),
    )
    .optional(),
  rolledBack: z
    .object({
      from: z.string(),
      to: z.string(),
      cause: z.enum(["Manual", "FailureBudget", "MetricGate", "RunFailed"]),
      message: z.string(),
      atMs: z.number(),
      actor: z.string(),
      allAtOnce: z.boolean().optional(),
      clusters: z.array(z.string()),
    })
    .optional(),
};

const recordSchema = z.object({
  name: z.string(),
  namespace: z.string(),
  defaultNamespace: z.string().optional(),
  targetNamespace: z.string().optional(),
  manifests: z.array(refSchema),
  files: z.array(refSchema).optional(),
  helmJson: z.string().optional(),
  kustomizeJson: z.string().optional(),
  correctDriftJson: z.string().optional(),
  namespaceLabelsJson: z.string().optional(),
  namespaceAnnotationsJson: z.string().optional(),
  targetsJson: z.string(),
  targetCustomizationsJson: z.string(),
  rolloutStrategyJson: z.string(),
  paused: z.boolean(),
  revision: z.string(),
  contents: z.record(z.string(), z.string()),
  createdAtMs: z.number(),
  updatedAtMs: z.number(),
  forceSyncGeneration: z.number().int().min(1).optional(),
  forceSyncClusters: z.record(z.string(), z.number().int().min(1)).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  dependsOnJson: z.string().optional(),
  updateStrategyName: z.string().optional(),
  drivenBy: z
    .object({
      run: z.string(),
      revision: z.string(),
      contents: z.record(z.string(), z.string()),
      baseRevision: z.string().optional(),
      pending: z.boolean().optional(),
    })
    .optional(),
  ...historySchema,
});

/** The "bundles" collection. */
export const BUNDLES = defineCollection<BundleRecord>("bundles", (value) =>
  recordSchema.parse(value),
);

/** The key of bundle `name`. */
export function bundleKey(name: string): string {
  return nameKey(name);
}
