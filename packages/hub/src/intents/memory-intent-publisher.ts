import { FlotillaError, showValue, type ClusterIntent } from "@flotilla/core";
import { intentKey, sha256Digest } from "@flotilla/protocol";
import {
  checkContentSize,
  planPublish,
  prepareIntent,
  publishedIntent,
  publishWhat,
  type IntentOperationOptions,
  type IntentPublisher,
  type IntentWriteOptions,
  type PublishedIntent,
  type PublishResult,
  type StoredContent,
} from "./intent-publisher.js";
import {
  applyFence,
  checkFence,
  NO_FENCES,
  type FenceMap,
} from "./intent-fences.js";

/** The in-memory IntentPublisher, plus what tests of hub code want to look at. */
export interface MemoryIntentPublisher extends IntentPublisher {
  /** Every stored intent, by cluster. */
  snapshot(): ReadonlyMap<string, PublishedIntent>;
  /** Stored bundle content, or undefined. */
  bundleContent(digest: string): Uint8Array | undefined;
}

/**
 * An IntentPublisher in memory, for unit tests of hub code: the same rules and errors as the
 * JetStream adapter (both pass one contract suite), without NATS. Revisions increase by one per
 * write across all clusters, like a KV bucket's.
 */
export function createMemoryIntentPublisher(
  options: { readonly now?: () => number } = {},
): MemoryIntentPublisher {
  return new MemoryPublisher(options.now ?? Date.now);
}

class MemoryPublisher implements MemoryIntentPublisher {
  readonly #intents = new Map<string, PublishedIntent>();
  /** Per key, the fences of its last write; kept when the intent is removed, as JetStream does. */
  readonly #fences = new Map<string, FenceMap>();
  readonly #contents = new Map<
    string,
    { readonly bytes: Uint8Array; readonly storedAtMs: number }
  >();
  readonly #now: () => number;
  #revision = 0;
  #started = false;

  constructor(now: () => number) {
    this.#now = now;
  }

  start(options: IntentOperationOptions = {}): Promise<void> {
    options.signal?.throwIfAborted();
    this.#started = true;
    return Promise.resolve();
  }

  stop(): Promise<void> {
    this.#started = false;
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  async publish(
    intent: ClusterIntent,
    options: IntentWriteOptions = {},
  ): Promise<PublishResult> {
    const prepared = prepareIntent(intent);
    const fence = checkFence(options.fence);
    await this.#ready("publish", options);
    const { key } = prepared;
    const stored = this.#intents.get(key);
    const stale = stored && {
      generation: stored.intent.generation,
      hash: stored.hash,
    };
    const plan = planPublish(
      prepared,
      stale,
      this.#fences.get(key) ?? NO_FENCES,
      fence,
      publishWhat(prepared),
    );
    if (plan.action === "unchanged" && stored) {
      return { ...stored, written: false };
    }
    const published = publishedIntent(
      prepared.intent,
      prepared.hash,
      ++this.#revision,
      plan.fences,
    );
    this.#intents.set(key, published);
    this.#fences.set(key, plan.fences);
    return { ...published, written: true };
  }

  async read(
    cluster: string,
    options: IntentOperationOptions = {},
  ): Promise<PublishedIntent | undefined> {
    const key = intentKey(cluster);
    await this.#ready("read", options);
    return this.#intents.get(key);
  }

  async remove(
    cluster: string,
    options: IntentWriteOptions = {},
  ): Promise<void> {
    const key = intentKey(cluster);
    const fence = checkFence(options.fence);
    await this.#ready("remove", options);
    const fences = applyFence(
      this.#fences.get(key) ?? NO_FENCES,
      fence,
      key,
      `Cannot remove the intent of cluster ${showValue(key)}`,
    );
    this.#fences.set(key, fences);
    if (this.#intents.delete(key)) this.#revision++;
  }

  async putBundleContent(
    content: Uint8Array,
    options: IntentOperationOptions = {},
  ): Promise<string> {
    checkContentSize(content);
    await this.#ready("put bundle content", options);
    const digest = sha256Digest(content);
    if (!this.#contents.has(digest)) {
      this.#contents.set(digest, {
        bytes: content.slice(),
        storedAtMs: this.#now(),
      });
    }
    return digest;
  }

  async listBundleContent(
    options: IntentOperationOptions = {},
  ): Promise<readonly StoredContent[]> {
    await this.#ready("list bundle content", options);
    return [...this.#contents].map(([digest, { bytes, storedAtMs }]) => ({
      id: digest,
      name: this.contentName(digest),
      storedAtMs,
      sizeBytes: bytes.byteLength,
    }));
  }

  /** The memory publisher keeps content in clear, by its digest. */
  contentName(digest: string): string {
    return digest;
  }

  async removeBundleContent(
    ids: readonly string[],
    options: IntentOperationOptions = {},
  ): Promise<void> {
    await this.#ready("remove bundle content", options);
    for (const id of ids) this.#contents.delete(id);
  }

  snapshot(): ReadonlyMap<string, PublishedIntent> {
    return new Map(this.#intents);
  }

  bundleContent(digest: string): Uint8Array | undefined {
    return this.#contents.get(digest)?.bytes.slice();
  }

  /** Answers on a later microtask, as a real backend would; fails when aborted or not started. */
  async #ready(action: string, options: IntentOperationOptions): Promise<void> {
    options.signal?.throwIfAborted();
    await Promise.resolve();
    options.signal?.throwIfAborted();
    if (!this.#started) {
      throw new FlotillaError(
        "unavailable",
        `Cannot ${action}: the intent publisher is not started`,
      );
    }
  }
}
