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
  type Result,
} from "@flotilla/core";
import { z } from "zod";
import { MAX_NAME_LENGTH } from "./limits.js";
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
}

const resourceSchema = z.looseObject({
  apiVersion: boundedString(253, 1),
  kind: boundedString(63, 1),
  metadata: z.looseObject({
    name: boundedString(253, 1),
    namespace: boundedString(63).optional(),
  }),
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
});

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
