/**
 * How a bundle is stored (collection "bundles", key = its name): the spec as the operator gave it,
 * with every manifest as a reference into the object store (never the bytes), the current
 * revision, and the content digest agents fetch for each content variant the bundle's target
 * customizations produce (keyed by default namespace, or `namespace#c<index>` for a customization
 * with patches: bundle-render.ts). Releases only need the digest, so a restarted hub resumes without
 * reading manifests again.
 */
import { z } from "zod";
import { nameKey } from "../store/keys.js";
import { defineCollection } from "../store/state-store.js";

/** A manifest file of a bundle, stored in the object store. */
export interface ManifestRef {
  /** The file's path in the bundle directory, for messages. */
  readonly path: string;
  readonly digest: string;
  readonly sizeBytes: number;
}

/** A stored bundle. */
export interface BundleRecord {
  readonly name: string;
  /** fleet.yaml `namespace`; "" for none. */
  readonly namespace: string;
  readonly manifests: readonly ManifestRef[];
  /** The JSON texts exactly as given ("" for none). */
  readonly targetsJson: string;
  readonly targetCustomizationsJson: string;
  readonly rolloutStrategyJson: string;
  readonly paused: boolean;
  /** Short content hash of what clusters receive (see bundle-render.ts). */
  readonly revision: string;
  /** Content digest of this revision by key: default namespace ("" for none), `ns#c<i>` when patched. */
  readonly contents: Readonly<Record<string, string>>;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

const recordSchema = z.object({
  name: z.string(),
  namespace: z.string(),
  manifests: z.array(
    z.object({
      path: z.string(),
      digest: z.string(),
      sizeBytes: z.number(),
    }),
  ),
  targetsJson: z.string(),
  targetCustomizationsJson: z.string(),
  rolloutStrategyJson: z.string(),
  paused: z.boolean(),
  revision: z.string(),
  contents: z.record(z.string(), z.string()),
  createdAtMs: z.number(),
  updatedAtMs: z.number(),
});

/** The "bundles" collection. */
export const BUNDLES = defineCollection<BundleRecord>("bundles", (value) =>
  recordSchema.parse(value),
);

/** The key of bundle `name`. */
export function bundleKey(name: string): string {
  return nameKey(name);
}
