/**
 * Bundle content: what an agent applies for one bundle revision. The hub renders it from the
 * bundle's manifests (with the cluster's target customization applied), stores it in the object
 * store under its digest, and puts the digest in the cluster's intent; the agent fetches it by
 * digest (which proves it is the content the hub meant) and decodes it here.
 *
 * Format: UTF-8 JSON `{ apiVersion: "flotilla.dev/v1", kind: "BundleContent", bundle, revision,
 * namespace, resources: [ Kubernetes objects ] }`, keys sorted (equal content, equal digest).
 */
import {
  boundsProblems,
  canonicalJson,
  fail,
  labelKeyProblem,
  MAX_LABELS,
  MAX_NAMESPACE_ANNOTATION_CHARS,
  type Result,
} from "@flotilla/core";
import { z } from "zod";
import { MAX_NAME_LENGTH } from "./limits.js";
import { MAX_BUNDLE_CONTENT_BYTES } from "./intents.js";
import { boundedString, parseWire } from "./codecs/validate.js";

/** Resources in one bundle revision, at most. */
export const MAX_BUNDLE_RESOURCES = 10_000;

/** A Kubernetes object as written in the bundle's manifests. */
export type KubernetesObject = Readonly<Record<string, unknown>> & {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: Readonly<Record<string, unknown>> & {
    readonly name: string;
    readonly namespace?: string;
  };
};

/** One bundle revision, ready to apply. */
export interface BundleContent {
  readonly apiVersion: "flotilla.dev/v1";
  readonly kind: "BundleContent";
  readonly bundle: string;
  readonly revision: string;
  /** Namespace for namespaced resources that do not set one ("" for none). */
  readonly namespace: string;
  /**
   * fleet.yaml `namespace` (docs/semantics.md#namespaces), when set: the hub placed the kinds it
   * knows; the agent places the rest (CRDs) by discovery, refusing cluster-scoped ones.
   */
  readonly targetNamespace?: string;
  readonly resources: readonly KubernetesObject[];
  /**
   * A Helm bundle (docs/bundles.md#helm-bundles): the chart the agent renders; `resources` is then
   * empty and the rendered objects take its place.
   */
  readonly helm?: BundleHelm;
  /**
   * fleet.yaml `namespaceLabels` / `namespaceAnnotations` for this cluster
   * (docs/bundles.md#namespace-labels-and-annotations): the agent creates the namespace the
   * bundle deploys into (`targetNamespace`, else `namespace`) and sets them on it.
   */
  readonly namespaceLabels?: Readonly<Record<string, string>>;
  readonly namespaceAnnotations?: Readonly<Record<string, string>>;
}

/** A `valuesFrom` entry, read by the agent on its cluster. */
export interface BundleValuesFrom {
  readonly kind: "ConfigMap" | "Secret";
  readonly name: string;
  /** Absent: the release namespace. */
  readonly namespace?: string;
  readonly key: string;
}

/** What the agent renders with `helm template`. */
export interface BundleHelm {
  /** The packaged chart (`.tgz`), base64. */
  readonly chart: string;
  readonly releaseName: string;
  /** The release namespace: the content's default namespace, or "default" when it has none. */
  readonly namespace: string;
  /** The merged values of this content's targets (without valuesFrom). */
  readonly values: Readonly<Record<string, unknown>>;
  /** Merged over `values` on the cluster, in order. */
  readonly valuesFrom: readonly BundleValuesFrom[];
  readonly skipSchemaValidation: boolean;
}

/**
 * The namespace a Helm bundle's chart is rendered for (docs/bundles.md#helm-bundles): fleet.yaml
 * `namespace` when set, else the release namespace the hub chose. valuesFrom entries without a
 * namespace read from it, and rendered objects without one go to it.
 */
export function helmReleaseNamespace(
  content: Pick<BundleContent, "targetNamespace"> & {
    readonly helm: Pick<BundleHelm, "namespace">;
  },
): string {
  return content.targetNamespace ?? content.helm.namespace;
}

/** `valuesFrom` entries of one content, at most. */
export const MAX_VALUES_FROM = 64;

const resourceSchema = z.looseObject({
  apiVersion: boundedString(253, 1),
  kind: boundedString(63, 1),
  metadata: z.looseObject({
    name: boundedString(253, 1),
    namespace: boundedString(63).optional(),
  }),
});

const valuesFromSchema = z.strictObject({
  kind: z.enum(["ConfigMap", "Secret"]),
  name: boundedString(253, 1),
  namespace: boundedString(63, 1).optional(),
  key: boundedString(253, 1),
});

const helmSchema = z.strictObject({
  chart: z
    .string()
    .min(1, "must not be empty")
    .max(
      Math.ceil(MAX_BUNDLE_CONTENT_BYTES / 3) * 4,
      "is larger than a bundle's content may be",
    )
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, "must be base64"),
  releaseName: boundedString(53, 1),
  namespace: boundedString(63, 1),
  values: z.record(z.string(), z.unknown()),
  valuesFrom: z
    .array(valuesFromSchema)
    .max(MAX_VALUES_FROM, `must have at most ${String(MAX_VALUES_FROM)} items`),
  skipSchemaValidation: z.boolean(),
});

const contentSchema = z.strictObject({
  apiVersion: z.literal("flotilla.dev/v1"),
  kind: z.literal("BundleContent"),
  bundle: boundedString(MAX_NAME_LENGTH, 1),
  revision: boundedString(MAX_NAME_LENGTH, 1),
  namespace: boundedString(63),
  targetNamespace: boundedString(63, 1).optional(),
  resources: z
    .array(resourceSchema)
    .max(
      MAX_BUNDLE_RESOURCES,
      `must have at most ${String(MAX_BUNDLE_RESOURCES)} items`,
    ),
  helm: helmSchema.optional(),
  namespaceLabels: metadataMap(63).optional(),
  namespaceAnnotations: metadataMap(MAX_NAMESPACE_ANNOTATION_CHARS).optional(),
});

/** Namespace labels or annotations: qualified-name keys, bounded values, at most MAX_LABELS. */
function metadataMap(maxValue: number) {
  return z
    .record(
      boundedString(317, 1).refine((k) => labelKeyProblem(k) === undefined, {
        error: "must be a qualified name (prefix/name)",
      }),
      boundedString(maxValue),
    )
    .refine((m) => Object.keys(m).length <= MAX_LABELS, {
      error: `must have at most ${String(MAX_LABELS)} entries`,
    });
}

/** Encodes content as canonical UTF-8 JSON (its digest is the bundle's content digest). */
export function encodeBundleContent(content: BundleContent): Uint8Array {
  return new TextEncoder().encode(canonicalJson(content));
}

/** Decodes and validates content fetched from the object store. */
export function parseBundleContent(bytes: Uint8Array): Result<BundleContent> {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    return fail([
      {
        path: "",
        message: `is not UTF-8 JSON (${error instanceof Error ? error.message : String(error)})`,
      },
    ]);
  }
  const outOfBounds = boundsProblems(raw, "");
  if (outOfBounds.length > 0) return fail(outOfBounds);
  return parseWire(contentSchema, raw, "");
}
