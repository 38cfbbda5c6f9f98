import { FlotillaError, showValue } from "@flotilla/core";
import { keyProblem, prefixProblem, type CollectionName } from "./keys.js";

/**
 * Room a KV write needs beside its value: the subject and the headers (operation, expected
 * revision). Stores keep `maxValueBytes` at least this far below the server's max_payload.
 */
export const KV_OVERHEAD_BYTES = 8 * 1024;

/**
 * The default largest document, 1 MiB less {@link KV_OVERHEAD_BYTES}: NATS's default max_payload
 * (1 MiB) bounds a whole message. Larger payloads (manifest bundles) belong in the JetStream object
 * store, referenced by content hash.
 */
export const DEFAULT_MAX_VALUE_BYTES = 1024 * 1024 - KV_OVERHEAD_BYTES;

/**
 * A collection of JSON documents (one KV bucket) and how to check a document read back from it.
 * `decode` throws when the stored value does not match (use a zod schema's `parse`); the store
 * reports that as `internal`, since only a bug or a foreign writer can store a bad document.
 */
export interface Collection<T> {
  readonly name: CollectionName;
  readonly decode: (value: unknown) => T;
}

/** Names a collection and its decoder. */
export function defineCollection<T>(
  name: CollectionName,
  decode: (value: unknown) => T,
): Collection<T> {
  return { name, decode };
}

/** A stored document. `revision` identifies this write; pass it back as `expectedRevision`. */
export interface Entry<T> {
  readonly key: string;
  readonly value: T;
  readonly revision: number;
}

/** One change seen by a watch, in write order. */
export type Change<T> =
  | {
      readonly type: "put";
      readonly key: string;
      readonly value: T;
      readonly revision: number;
    }
  | {
      readonly type: "delete";
      readonly key: string;
      readonly revision: number;
    };

/** Every operation can be abandoned; an aborted call rejects with the signal's reason. */
export interface OperationOptions {
  readonly signal?: AbortSignal;
}

/**
 * Compare-and-set. `expectedRevision: 0` means "the key must not exist" (never written, or deleted);
 * `n > 0` means "the key's last write, put or delete, had revision n". Omit it to write
 * unconditionally.
 */
export interface PutOptions extends OperationOptions {
  readonly expectedRevision?: number;
}

/** Compare-and-set for deletes: `expectedRevision` must be the key's current revision (≥ 1). */
export interface DeleteOptions extends OperationOptions {
  readonly expectedRevision?: number;
}

/** `prefix` is a plain string prefix of the key (`"web"` matches `web.1` and `webapp`). */
export interface ListOptions extends OperationOptions {
  readonly prefix?: string;
}

/** A watch runs until `signal` aborts or the store stops; then its iteration ends normally. */
export interface WatchOptions {
  readonly signal: AbortSignal;
  readonly prefix?: string;
}

/**
 * The hub's state: clusters, cluster groups, strategies, bundles and their revisions, runs, gate
 * decisions. Documents are JSON, at most `maxValueBytes` once encoded as UTF-8; keys follow the
 * rules in `keys.ts`. Revisions increase with every write to a collection (they are the KV
 * bucket's sequence numbers), so they order writes but are not contiguous per key.
 *
 * Errors are FlotillaErrors: `invalid_argument` for a bad key, prefix, revision or value (nothing
 * is stored); `failed_precondition` as a {@link RevisionConflictError} when a compare-and-set loses;
 * `unavailable` while the backend is unreachable or the store is not started (retry later);
 * `internal` for a stored document that fails `decode`.
 */
export interface StateStore extends AsyncDisposable {
  /** The largest document accepted, in bytes of UTF-8 JSON. */
  readonly maxValueBytes: number;
  /** Prepares the backend (creates missing buckets). Idempotent. */
  start(options?: OperationOptions): Promise<void>;
  /** Ends every watch; later calls fail with `unavailable` until `start()` again. */
  stop(): Promise<void>;
  get<T>(
    collection: Collection<T>,
    key: string,
    options?: OperationOptions,
  ): Promise<Entry<T> | undefined>;
  /** Stores `value` under `key` and resolves with the new revision. */
  put<T>(
    collection: Collection<T>,
    key: string,
    value: T,
    options?: PutOptions,
  ): Promise<number>;
  /**
   * Deletes `key` (a write with its own revision, which watches see). Without `expectedRevision`
   * deleting a missing key is not an error.
   */
  delete(
    collection: Collection<unknown>,
    key: string,
    options?: DeleteOptions,
  ): Promise<void>;
  /** The live documents, sorted by key. */
  list<T>(
    collection: Collection<T>,
    options?: ListOptions,
  ): Promise<Entry<T>[]>;
  /**
   * Resolves once the watch is established: every change made after that is delivered, in order.
   * Changes made before are not (read them with `list` first).
   */
  watch<T>(
    collection: Collection<T>,
    options: WatchOptions,
  ): Promise<AsyncIterable<Change<T>>>;
}

/** A compare-and-set that lost: the key was written (or created, or deleted) by someone else. */
export class RevisionConflictError extends FlotillaError {
  constructor(
    readonly collection: CollectionName,
    readonly key: string,
    readonly expectedRevision: number,
    action: "put" | "delete",
    options: { cause?: unknown } = {},
  ) {
    super(
      "failed_precondition",
      expectedRevision === 0
        ? `Cannot create ${ref(collection, key)}: it already exists`
        : `Cannot ${action} ${ref(collection, key)} at revision ${String(expectedRevision)}: it has been written since`,
      options,
    );
  }
}

/** True for the error of a compare-and-set that lost; re-read and retry. */
export function isRevisionConflict(
  error: unknown,
): error is RevisionConflictError {
  return error instanceof RevisionConflictError;
}

/** `"clusters/web-1"`: how messages name a document (quoted, long keys shortened). */
export function ref(collection: CollectionName, key: string): string {
  return showValue(`${collection}/${key}`);
}

/** Throws `invalid_argument` unless `key` follows the key rules. */
export function checkKey(
  action: string,
  collection: CollectionName,
  key: string,
): void {
  const problem = keyProblem(key);
  if (problem !== undefined) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot ${action} ${ref(collection, key)}: the key ${problem}`,
      { problems: [{ path: "key", message: problem, value: key }] },
    );
  }
}

/** Throws `invalid_argument` unless `prefix` can select keys. */
export function checkPrefix(collection: CollectionName, prefix: string): void {
  const problem = prefixProblem(prefix);
  if (problem !== undefined) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot list "${collection}" by prefix ${showValue(prefix)}: the prefix ${problem}`,
      { problems: [{ path: "prefix", message: problem, value: prefix }] },
    );
  }
}

/** Throws `invalid_argument` unless `revision` is absent, or an integer ≥ `min`. */
export function checkRevision(
  action: string,
  collection: CollectionName,
  key: string,
  revision: number | undefined,
  min: 0 | 1,
): void {
  if (revision === undefined) return;
  if (!Number.isSafeInteger(revision) || revision < min) {
    const message = `must be an integer of at least ${String(min)}`;
    throw new FlotillaError(
      "invalid_argument",
      `Cannot ${action} ${ref(collection, key)}: expectedRevision ${String(revision)} ${message}`,
      { problems: [{ path: "expectedRevision", message, value: revision }] },
    );
  }
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/**
 * Encodes a document as UTF-8 JSON, or throws `invalid_argument` if it cannot be JSON or is larger
 * than `maxValueBytes`. `NaN` and infinities become `null`, as in `JSON.stringify`.
 */
export function encodeValue(
  collection: CollectionName,
  key: string,
  value: unknown,
  maxValueBytes: number,
): Uint8Array {
  let json: string | undefined;
  try {
    // Typed as string, but undefined for undefined, functions and symbols.
    json = JSON.stringify(value);
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot put ${ref(collection, key)}: the value is not JSON: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  if (json === undefined) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot put ${ref(collection, key)}: the value is not JSON: ${typeof value}`,
    );
  }
  const bytes = utf8.encode(json);
  if (bytes.byteLength > maxValueBytes) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot put ${ref(collection, key)}: the value is ${String(bytes.byteLength)} bytes, more than the ${String(maxValueBytes)} allowed`,
    );
  }
  return bytes;
}

/** Parses and decodes a stored document; a document that does not decode is `internal`. */
export function decodeValue<T>(
  collection: Collection<T>,
  key: string,
  bytes: Uint8Array,
): T {
  try {
    return collection.decode(JSON.parse(fromUtf8.decode(bytes)));
  } catch (error) {
    throw new FlotillaError(
      "internal",
      `Cannot read ${ref(collection.name, key)}: the stored document is invalid: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
