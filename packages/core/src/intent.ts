/**
 * A cluster's intent (docs/semantics.md#objects): what the
 * hub wants the cluster to run now — for each bundle the revision it should hold, and at most one
 * platform upgrade. Intents are desired state, not commands: the latest replaces any earlier one.
 * Every change gets the next `generation`; an unchanged intent keeps its generation, so publishing
 * it again is harmless (agents treat the same generation as a no-op).
 *
 * The content hash is computed by the hub over {@link canonicalIntentJson} (core has no crypto).
 */
import { z } from "zod";
import type { Result } from "./result.js";
import { parseWith, strictObject } from "./schema.js";
import type { MemberTarget } from "./staged/run.js";
import type { UpgradeType } from "./upgrade.js";
import { compact } from "./compact.js";

/** The bundle part of an intent: which revision, and where its manifests are. */
export interface BundleIntent {
  readonly revision: string;
  /** Content digest of the manifests (`sha256:…`), resolved in the object store by the agent. */
  readonly digest: string;
  /**
   * The key that opens the stored content (base64url, 32 bytes; docs/security.md, "Bundle
   * content"). Only the intents of the clusters the content is for carry it. Absent in intents
   * written before content was sealed.
   */
  readonly key?: string;
  /**
   * The redeploy counter (docs/semantics.md#redeploying-a-bundle): when it grows, the agent applies
   * the same revision again. Absent means 0, and is how it is written then, so intents of bundles
   * never redeployed read the same to agents that do not know the field.
   */
  readonly forceSync?: number;
  /**
   * fleet.yaml `correctDrift` for this cluster when enabled (docs/semantics.md#drift-correction):
   * the agent restores drifted objects, taking other appliers' fields only with `force`. Absent
   * means drift is reported, not corrected. It is not part of the revision: changing it changes
   * the intent, not the content.
   */
  readonly correctDrift?: IntentDriftCorrection;
}

/** The intent's form of an enabled drift correction. */
export interface IntentDriftCorrection {
  readonly force: boolean;
}

/** The upgrade part of an intent: one member of one staged run. */
export interface UpgradeIntent {
  readonly run: string;
  /** What kind of upgrade: the agent picks its driver's mode and maintenance-window scope from it. */
  readonly type: UpgradeType;
  readonly target: MemberTarget;
}

/** A cluster's intent. */
export interface ClusterIntent {
  readonly apiVersion: "flotilla.dev/v1";
  readonly cluster: string;
  /** Strictly increasing per cluster; 0 is never issued. */
  readonly generation: number;
  readonly bundles: Readonly<Record<string, BundleIntent>>;
  readonly upgrade?: UpgradeIntent;
}

/** The intent of a cluster the hub has never addressed. */
export function emptyIntent(cluster: string): ClusterIntent {
  return { apiVersion: "flotilla.dev/v1", cluster, generation: 0, bundles: {} };
}

/** A change to one part of an intent. */
export type IntentChange =
  | {
      readonly type: "SetBundle";
      readonly bundle: string;
      readonly revision: string;
      readonly digest: string;
      readonly key?: string;
      readonly forceSync?: number;
      readonly correctDrift?: IntentDriftCorrection;
    }
  | { readonly type: "RemoveBundle"; readonly bundle: string }
  | { readonly type: "SetUpgrade"; readonly upgrade: UpgradeIntent }
  | { readonly type: "ClearUpgrade"; readonly run: string };

/** Intent changes by cluster, each cluster's in the order they are to be applied. */
export type IntentChanges = ReadonlyMap<string, readonly IntentChange[]>;

/**
 * Applies a change. Returns the same object when nothing changes (no new generation), otherwise a
 * new intent with the next generation.
 */
export function changeIntent(
  intent: ClusterIntent,
  change: IntentChange,
): ClusterIntent {
  const next = (patch: Partial<ClusterIntent>): ClusterIntent => ({
    ...intent,
    ...patch,
    generation: intent.generation + 1,
  });
  switch (change.type) {
    case "SetBundle": {
      const current = intent.bundles[change.bundle];
      const forceSync =
        change.forceSync === undefined || change.forceSync === 0
          ? undefined
          : change.forceSync;
      if (
        current?.revision === change.revision &&
        current.digest === change.digest &&
        current.key === change.key &&
        current.forceSync === forceSync &&
        current.correctDrift?.force === change.correctDrift?.force
      )
        return intent;
      return next({
        bundles: {
          ...intent.bundles,
          [change.bundle]: {
            revision: change.revision,
            digest: change.digest,
            ...compact({
              key: change.key,
              forceSync,
              correctDrift: change.correctDrift,
            }),
          },
        },
      });
    }
    case "RemoveBundle": {
      if (!(change.bundle in intent.bundles)) return intent;
      const bundles = Object.fromEntries(
        Object.entries(intent.bundles).filter(
          ([name]) => name !== change.bundle,
        ),
      );
      return next({ bundles });
    }
    case "SetUpgrade":
      if (sameUpgrade(intent.upgrade, change.upgrade)) return intent;
      return next({ upgrade: change.upgrade });
    case "ClearUpgrade": {
      // Only the run that set the upgrade clears it: a later run's upgrade is not undone.
      if (intent.upgrade?.run !== change.run) return intent;
      const cleared: {
        -readonly [K in keyof ClusterIntent]: ClusterIntent[K];
      } = next({});
      delete cleared.upgrade;
      return cleared;
    }
    default: {
      const never: never = change;
      return never;
    }
  }
}

function sameUpgrade(a: UpgradeIntent | undefined, b: UpgradeIntent): boolean {
  return a !== undefined && canonicalJson(a) === canonicalJson(b);
}

/** JSON with object keys sorted at every level: equal intents give equal text, hence equal hashes. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The canonical text of an intent, the input of its content hash. */
export function canonicalIntentJson(intent: ClusterIntent): string {
  return canonicalJson(intent);
}

const memberTargetSchema = strictObject({
  kubernetesVersion: z.string().max(32).optional(),
  nodeImages: z
    .array(
      strictObject({
        pool: z.string().max(253),
        from: z.string().max(128),
        to: z.string().max(128),
      }),
    )
    .max(1000)
    .optional(),
  revision: z.string().max(128).optional(),
});

const intentSchema = strictObject({
  apiVersion: z.literal("flotilla.dev/v1"),
  cluster: z.string().min(1).max(63),
  generation: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  bundles: z.record(
    z.string().min(1).max(253),
    strictObject({
      revision: z.string().min(1).max(128),
      digest: z.string().min(1).max(200),
      key: z
        .string()
        .regex(/^[A-Za-z0-9_-]{43}$/, "must be 32 bytes in unpadded base64url")
        .optional(),
      forceSync: z
        .number()
        .int()
        .min(1)
        .max(Number.MAX_SAFE_INTEGER)
        .optional(),
      correctDrift: strictObject({ force: z.boolean() }).optional(),
    }),
  ),
  upgrade: strictObject({
    run: z.string().min(1).max(253),
    type: z.enum(["Full", "ControlPlaneOnly", "NodeImageOnly"]),
    target: memberTargetSchema,
  }).optional(),
});

/** Parses an intent read from the wire (the agent's side): bounded, every problem with its path. */
export function parseIntent(raw: unknown): Result<ClusterIntent> {
  return parseWith(intentSchema, raw);
}
