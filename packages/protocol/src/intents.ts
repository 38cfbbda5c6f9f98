/**
 * How intents travel hub → agent over NATS (docs/architecture.md): every name both sides use, and the stored document. Nothing else spells a bucket, key or subject out.
 *
 * * One JetStream KV bucket, `<prefix>-intents`, one key per cluster (the cluster name), one value
 *   kept per key. The value is an {@link IntentDocument}: `{"hash":"sha256:…","intent":{…}}`.
 * * The bucket's stream **republishes** every stored write on a plain subject,
 *   `<prefix>.intents.<cluster>`, with the stream sequence (the KV revision) in `Nats-Sequence`.
 *   An agent reads its key once (a direct get, no consumer) on every (re)connect and otherwise
 *   holds one core subscription to that subject: 10,000 agents cost the server 10,000
 *   subscriptions, not 10,000 JetStream consumers.
 *   Why not subscribe to the KV subject `$KV.<bucket>.<cluster>` itself: core subscribers there
 *   also receive publishes that JetStream then refuses (a lost compare-and-set between two hubs, a
 *   value over the size limit), so an agent could act on an intent that was never stored. The
 *   republished subject carries only writes the stream stored, in stream order.
 * * Manifest bundles too large for a message go into the object store `<prefix>-bundle-content`,
 *   sealed (bundle-content-seal.ts); intents reference them by their content digest
 *   (`sha256:<hex>`) and carry the key that opens them.
 */
import { createHash } from "node:crypto";
import {
  boundsProblems,
  canonicalIntentJson,
  fail,
  FlotillaError,
  joinPath,
  ok,
  parseIntent,
  type ClusterIntent,
  type Problem,
  type Result,
} from "@flotilla/core";

/** Bucket names and intent subjects start with this unless configured otherwise. */
export const DEFAULT_INTENTS_PREFIX = "flotilla";

/**
 * Largest stored intent document in bytes. Intents reference bundles by digest, so they are
 * small; the bound keeps one bad value from costing 10,000 agents much.
 */
export const MAX_INTENT_DOCUMENT_BYTES = 256 * 1024;

/** Room the KV message needs beside the document (subject, headers) within the server's limit. */
export const INTENT_MESSAGE_OVERHEAD_BYTES = 4 * 1024;

/** Largest bundle content an agent accepts from the object store. */
export const MAX_BUNDLE_CONTENT_BYTES = 64 * 1024 * 1024;

/** Header on every intent write: the content hash, for people reading the bucket with `nats`. */
export const INTENT_HASH_HEADER = "Flotilla-Intent-Hash";

/** Header on every intent write: the generation, for the same reason. */
export const INTENT_GENERATION_HEADER = "Flotilla-Intent-Generation";

const PREFIX_PATTERN = /^[-_A-Za-z0-9]{1,32}$/;
const CLUSTER_KEY_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

function checkPrefix(prefix: string): string {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new FlotillaError(
      "invalid_argument",
      `Invalid intents prefix "${prefix}": it must be 1 to 32 characters of A-Z, a-z, 0-9, - and _`,
    );
  }
  return prefix;
}

/** The KV bucket of intents, e.g. `flotilla-intents`. */
export function intentsBucket(prefix: string = DEFAULT_INTENTS_PREFIX): string {
  return `${checkPrefix(prefix)}-intents`;
}

/** The JetStream stream behind {@link intentsBucket}. */
export function intentsStream(prefix: string = DEFAULT_INTENTS_PREFIX): string {
  return `KV_${intentsBucket(prefix)}`;
}

/** The object store of bundle content, e.g. `flotilla-bundle-content`. */
export function bundleContentBucket(
  prefix: string = DEFAULT_INTENTS_PREFIX,
): string {
  return `${checkPrefix(prefix)}-bundle-content`;
}

/** Why `cluster` cannot be an intent key (it must be a DNS label), or undefined. */
export function intentKeyProblem(cluster: string): string | undefined {
  return CLUSTER_KEY_PATTERN.test(cluster)
    ? undefined
    : "must be a DNS label: 1 to 63 lower-case letters, digits and '-', starting and ending alphanumeric";
}

/** The key of a cluster's intent: its name, which must be a DNS label (a valid NATS token). */
export function intentKey(cluster: string): string {
  const problem = intentKeyProblem(cluster);
  if (problem !== undefined) {
    throw new FlotillaError(
      "invalid_argument",
      `Invalid cluster name ${JSON.stringify(cluster)} for an intent key: it ${problem}`,
      { problems: [{ path: "cluster", message: problem, value: cluster }] },
    );
  }
  return cluster;
}

/** The KV subject the hub writes a cluster's intent to, `$KV.<bucket>.<key>`. */
export function intentKvSubject(
  cluster: string,
  prefix: string = DEFAULT_INTENTS_PREFIX,
): string {
  return `$KV.${intentsBucket(prefix)}.${intentKey(cluster)}`;
}

/** The subject an agent subscribes to for its cluster: `<prefix>.intents.<key>`. */
export function intentSubject(
  cluster: string,
  prefix: string = DEFAULT_INTENTS_PREFIX,
): string {
  return `${checkPrefix(prefix)}.intents.${intentKey(cluster)}`;
}

/** Every cluster's {@link intentSubject}: `<prefix>.intents.*`. */
export function allIntentSubjects(
  prefix: string = DEFAULT_INTENTS_PREFIX,
): string {
  return `${checkPrefix(prefix)}.intents.*`;
}

/** The stream's republish rule that feeds {@link intentSubject} with every stored write. */
export function intentsRepublish(prefix: string = DEFAULT_INTENTS_PREFIX): {
  readonly src: string;
  readonly dest: string;
} {
  return {
    src: `$KV.${intentsBucket(prefix)}.>`,
    dest: `${checkPrefix(prefix)}.intents.>`,
  };
}

/**
 * How the intents bucket is created (by the hub; tests that stand in for it use the same): one
 * value per key, the republish rule, and a message limit that admits the largest document with
 * its headers.
 */
export function intentsBucketSettings(
  prefix: string = DEFAULT_INTENTS_PREFIX,
): {
  readonly bucket: string;
  readonly history: 1;
  readonly maxValueSize: number;
  readonly republish: { readonly src: string; readonly dest: string };
} {
  return {
    bucket: intentsBucket(prefix),
    history: 1,
    maxValueSize: MAX_INTENT_DOCUMENT_BYTES + INTENT_MESSAGE_OVERHEAD_BYTES,
    republish: intentsRepublish(prefix),
  };
}

/** `sha256:<hex>` of some bytes or of a string's UTF-8. */
export function sha256Digest(content: Uint8Array | string): string {
  return `sha256:${createHash("sha256").update(content).digest("hex")}`;
}

/** True for a well-formed content digest, `sha256:` and 64 lower-case hex digits. */
export function isSha256Digest(value: string): boolean {
  return DIGEST_PATTERN.test(value);
}

/** The content hash of an intent: the digest of its canonical JSON. */
export function intentHash(intent: ClusterIntent): string {
  return sha256Digest(canonicalIntentJson(intent));
}

/** What the intents bucket stores under a cluster's key. */
export interface IntentDocument {
  readonly intent: ClusterIntent;
  /** {@link intentHash} of `intent`. */
  readonly hash: string;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Encodes an intent (already validated with `parseIntent`) as its stored document. The bytes are
 * deterministic: the intent part is its canonical JSON.
 */
export function encodeIntentDocument(intent: ClusterIntent): {
  readonly bytes: Uint8Array;
  readonly hash: string;
} {
  const json = canonicalIntentJson(intent);
  const hash = sha256Digest(json);
  return {
    bytes: utf8.encode(`{"hash":${JSON.stringify(hash)},"intent":${json}}`),
    hash,
  };
}

/**
 * Parses a stored document read from the wire (the agent's side): bounded in size, a valid
 * intent for `cluster`, and a hash that matches the intent. Every problem comes with its path.
 */
export function parseIntentDocument(
  bytes: Uint8Array,
  cluster: string,
  maxBytes: number = MAX_INTENT_DOCUMENT_BYTES,
): Result<IntentDocument> {
  if (bytes.byteLength > maxBytes) {
    return fail([
      {
        path: "",
        message: `is ${String(bytes.byteLength)} bytes, more than the ${String(maxBytes)} allowed`,
      },
    ]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(fromUtf8.decode(bytes));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return fail([{ path: "", message: `is not UTF-8 JSON: ${message}` }]);
  }
  const outOfBounds = boundsProblems(raw, "");
  if (outOfBounds.length > 0) return fail(outOfBounds);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return fail([{ path: "", message: "must be an object", value: raw }]);
  }
  const { hash, intent, ...rest } = raw as Record<string, unknown>;
  const problems: Problem[] = Object.keys(rest).map((key) => ({
    path: key,
    message: "unknown field (known fields: hash, intent)",
  }));
  if (typeof hash !== "string" || !isSha256Digest(hash)) {
    problems.push({
      path: "hash",
      message: 'must be "sha256:" and 64 lower-case hex digits',
      value: hash,
    });
  }
  const parsed = parseIntent(intent);
  if (!parsed.ok) {
    for (const p of parsed.problems) {
      problems.push({
        ...p,
        path: p.path === "" ? "intent" : joinPath("intent", p.path),
      });
    }
    return fail(problems);
  }
  if (parsed.value.cluster !== cluster) {
    problems.push({
      path: "intent.cluster",
      message: `must be the cluster of the key, "${cluster}"`,
      value: parsed.value.cluster,
    });
  }
  if (problems.length > 0) return fail(problems);
  const actual = intentHash(parsed.value);
  if (actual !== hash) {
    return fail([
      {
        path: "hash",
        message: `does not match the intent, whose hash is ${actual}`,
        value: hash,
      },
    ]);
  }
  return ok({ intent: parsed.value, hash: actual });
}
