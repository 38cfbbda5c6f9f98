/**
 * The IntentPublisher port: how the hub hands each cluster its desired state (docs/architecture.md).
 * One stored intent per cluster; generations only go up.
 * The rules every adapter follows are here, so the in-memory adapter refuses exactly what the
 * JetStream adapter refuses.
 */
import {
  FlotillaError,
  parseIntent,
  showValue,
  type ClusterIntent,
} from "@flotilla/core";
import {
  encodeIntentDocument,
  intentKey,
  MAX_BUNDLE_CONTENT_BYTES,
  MAX_INTENT_DOCUMENT_BYTES,
} from "@flotilla/protocol";
import { applyFence, type Fence, type FenceMap } from "./intent-fences.js";

/** Every operation can be abandoned; an aborted call rejects with the signal's reason. */
export interface IntentOperationOptions {
  readonly signal?: AbortSignal;
}

/** Options of the writes, `publish` and `remove`. */
export interface IntentWriteOptions extends IntentOperationOptions {
  /**
   * The writer's fence (see {@link IntentPublisher}); without one the write is not fenced and
   * leaves the stored fences as they are (a single hub, or code that owns no unit).
   */
  readonly fence?: Fence | undefined;
}

/** A cluster's stored intent. */
export interface PublishedIntent {
  readonly intent: ClusterIntent;
  /** `sha256:` of the intent's canonical JSON. */
  readonly hash: string;
  /** The write's KV revision: it orders writes (not contiguous per cluster). */
  readonly revision: number;
  /** Per unit, the highest epoch that wrote the intent; absent when no fenced write has. */
  readonly fences?: FenceMap;
}

/** A {@link PublishedIntent}, its `fences` left out when there are none. */
export function publishedIntent(
  intent: ClusterIntent,
  hash: string,
  revision: number,
  fences: FenceMap,
): PublishedIntent {
  return fences.size === 0
    ? { intent, hash, revision }
    : { intent, hash, revision, fences };
}

/** Bundle content in the store: an object, or chunks no object names (an upload cut short). */
export interface StoredContent {
  /** What {@link IntentPublisher.removeBundleContent} takes to remove it; opaque. */
  readonly id: string;
  /** The object's name ({@link IntentPublisher.contentName} of its digest); undefined when nothing names it. */
  readonly name: string | undefined;
  /** When it was last written, epoch milliseconds. */
  readonly storedAtMs: number;
  /** Its size in bytes (for chunks no object names, an estimate). */
  readonly sizeBytes: number;
}

/** What {@link IntentPublisher.publish} did. */
export interface PublishResult extends PublishedIntent {
  /**
   * False when this very intent (same generation, same hash) was already stored, and so was the
   * write's fence: a no-op.
   */
  readonly written: boolean;
}

/**
 * Publishes intents to agents, and stores bundle content they fetch by digest.
 *
 * `publish` stores the intent under its cluster's key if its generation is higher than the
 * stored one. Publishing the stored generation again with the same content is a harmless no-op,
 * since the hub republishes after a crash ("persist before publish"). It refuses with an
 * {@link IntentRefusedError}: a lower generation (`failed_precondition`), and the stored generation
 * with other content (`internal`: one generation must never mean two payloads). Two hubs cannot
 * interleave: writes are compare-and-set on the stored revision.
 *
 * Fenced writes (intent-fences.ts): `publish` and `remove` may carry the writer's fence
 * `{ unit, epoch }`. The stored intent keeps, beside the document, the highest epoch per unit that
 * wrote it (at most `MAX_FENCED_UNITS` units, the highest epochs). A fenced write is refused
 * with a `FencedError` (`failed_precondition`) when that map holds a higher epoch for its
 * unit, before anything else is decided; otherwise it stores the map with the unit's epoch raised
 * (a publish of the very intent stored still writes once to record a higher epoch). An unfenced
 * write keeps the map as it is. The check and the write are one compare-and-set. `remove` keeps
 * the map too, so a deposed owner cannot bring back the intent of a cluster that left the fleet.
 *
 * Errors are FlotillaErrors: `invalid_argument` for an invalid or oversized intent or fence, `unavailable`
 * while the backend is unreachable or the publisher is not started.
 */
export interface IntentPublisher extends AsyncDisposable {
  /**
   * Calls `onIntent` with every intent stored from now on (undefined: removed) until `signal`
   * aborts, so a hub replica keeps what it cached in step with the others' writes
   * (docs/high-availability.md). Adapters of a store no other process writes may leave it out.
   */
  watch?(
    signal: AbortSignal,
    onIntent: (cluster: string, stored: PublishedIntent | undefined) => void,
  ): Promise<void>;
  /** Prepares the backend (creates the buckets if missing). Idempotent. */
  start(options?: IntentOperationOptions): Promise<void>;
  stop(): Promise<void>;
  publish(
    intent: ClusterIntent,
    options?: IntentWriteOptions,
  ): Promise<PublishResult>;
  /** The stored intent of `cluster`, or undefined if none (never published, or removed). */
  read(
    cluster: string,
    options?: IntentOperationOptions,
  ): Promise<PublishedIntent | undefined>;
  /**
   * Removes the cluster's intent (the cluster left the fleet); agents see it deleted. A later
   * publish for the cluster starts over at any generation (its fences stay). Removing a missing
   * intent is no error.
   */
  remove(cluster: string, options?: IntentWriteOptions): Promise<void>;
  /** Stores bundle content by its digest (`sha256:<hex>`) and returns the digest. Idempotent. */
  putBundleContent(
    content: Uint8Array,
    options?: IntentOperationOptions,
  ): Promise<string>;
  /**
   * The name content `digest` is stored under (what {@link StoredContent.name} says): sealed
   * content's name derived from its key in JetStream (docs/security.md, "Bundle content").
   */
  contentName(digest: string): string;
  /** Everything in the bundle-content store, including what an interrupted write left. */
  listBundleContent(
    options?: IntentOperationOptions,
  ): Promise<readonly StoredContent[]>;
  /**
   * Removes stored content by {@link StoredContent.id} without writing anything (no delete marker),
   * so that it frees space even in a store too full to take one more message. Removing what is
   * already gone is no error.
   */
  removeBundleContent(
    ids: readonly string[],
    options?: IntentOperationOptions,
  ): Promise<void>;
}

/** Why an intent was refused: a lower generation, or the same generation with other content. */
export type IntentRefusal = "stale_generation" | "hash_mismatch";

/** A publish refused because the stored intent is newer or differs for the same generation. */
export class IntentRefusedError extends FlotillaError {
  constructor(
    readonly reason: IntentRefusal,
    readonly cluster: string,
    readonly generation: number,
    readonly hash: string,
    readonly stored: { readonly generation: number; readonly hash: string },
  ) {
    const what = `Cannot publish intent generation ${String(generation)} for cluster ${showValue(cluster)}`;
    super(
      reason === "stale_generation" ? "failed_precondition" : "internal",
      reason === "stale_generation"
        ? `${what}: generation ${String(stored.generation)} is already published`
        : `${what}: generation ${String(generation)} is already published with hash ${stored.hash}, not ${hash}`,
    );
  }
}

/** An intent ready to store: validated, encoded, hashed. */
export interface PreparedIntent {
  readonly intent: ClusterIntent;
  readonly key: string;
  readonly bytes: Uint8Array;
  readonly hash: string;
}

/**
 * Validates an intent as agents will (`parseIntent`), and encodes it. Throws `invalid_argument`
 * for an invalid intent, a cluster name that cannot be a key, or a document over the limit.
 */
export function prepareIntent(intent: ClusterIntent): PreparedIntent {
  const parsed = parseIntent(intent);
  if (!parsed.ok) throw FlotillaError.invalid("intent", parsed.problems);
  const key = intentKey(parsed.value.cluster);
  const { bytes, hash } = encodeIntentDocument(parsed.value);
  if (bytes.byteLength > MAX_INTENT_DOCUMENT_BYTES) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot publish intent generation ${String(parsed.value.generation)} for cluster ${showValue(key)}: it is ${String(bytes.byteLength)} bytes, more than the ${String(MAX_INTENT_DOCUMENT_BYTES)} allowed`,
    );
  }
  return { intent: parsed.value, key, bytes, hash };
}

/**
 * Decides a publish against the stored intent: `"write"` or `"unchanged"` (the same generation
 * and hash are stored), or throws an {@link IntentRefusedError}.
 */
export function decidePublish(
  prepared: PreparedIntent,
  stored: { readonly generation: number; readonly hash: string } | undefined,
): "write" | "unchanged" {
  if (stored === undefined) return "write";
  const { intent, hash } = prepared;
  if (intent.generation > stored.generation) return "write";
  if (intent.generation === stored.generation && hash === stored.hash) {
    return "unchanged";
  }
  throw new IntentRefusedError(
    intent.generation < stored.generation
      ? "stale_generation"
      : "hash_mismatch",
    intent.cluster,
    intent.generation,
    hash,
    stored,
  );
}

/** What a publish does: store the intent with `fences`, or nothing (`unchanged`). */
export interface PublishPlan {
  readonly action: "write" | "unchanged";
  readonly fences: FenceMap;
}

/**
 * Decides a publish fenced by `fence` (or not) against the stored intent and its fences: the fence
 * first ({@link applyFence}), then the generation ({@link decidePublish}). Throws what they throw.
 */
export function planPublish(
  prepared: PreparedIntent,
  stored: { readonly generation: number; readonly hash: string } | undefined,
  storedFences: FenceMap,
  fence: Fence | undefined,
  what: string,
): PublishPlan {
  const fences = applyFence(storedFences, fence, prepared.key, what);
  const action = decidePublish(prepared, stored);
  // The very intent is stored, but this writer's epoch is not yet: record it.
  if (action === "unchanged" && fences !== storedFences) {
    return { action: "write", fences };
  }
  return { action, fences };
}

/** `Cannot publish intent generation N for cluster "c"`: how publish errors start. */
export function publishWhat(prepared: PreparedIntent): string {
  return `Cannot publish intent generation ${String(prepared.intent.generation)} for cluster ${showValue(prepared.key)}`;
}

/** Throws `invalid_argument` for bundle content larger than agents accept. */
export function checkContentSize(content: Uint8Array): void {
  if (content.byteLength > MAX_BUNDLE_CONTENT_BYTES) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot store bundle content: it is ${String(content.byteLength)} bytes, more than the ${String(MAX_BUNDLE_CONTENT_BYTES)} agents accept`,
    );
  }
}
