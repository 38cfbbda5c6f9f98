/**
 * An intent key's last message in the intents bucket, headers included: the KV client's entries do
 * not carry headers, and the fences of a write live in one (intent-fences.ts). Reads are direct
 * gets, as the KV client's own `get` and the agents' reads are; writes are compare-and-set.
 */
import { FlotillaError, formatProblem, showValue } from "@flotilla/core";
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { headers } from "@nats-io/transport-node";
import {
  INTENT_GENERATION_HEADER,
  INTENT_HASH_HEADER,
  intentKvSubject,
  intentsStream,
} from "@flotilla/protocol";
import {
  encodeFences,
  INTENT_FENCES_HEADER,
  parseFences,
  type FenceMap,
} from "./intent-fences.js";
import type { PreparedIntent } from "./intent-publisher.js";

/** The header that marks a KV delete marker (`DEL`) or purge (`PURGE`); empty on a value. */
const KV_OPERATION_HEADER = "KV-Operation";

/** The last message stored under an intent key. */
export interface StoredIntent {
  /** Its KV revision (the stream sequence). */
  readonly revision: number;
  /** True for a delete or purge marker: the intent was removed. */
  readonly deleted: boolean;
  /** The stored document (empty for a marker). */
  readonly data: Uint8Array;
  readonly fences: FenceMap;
}

/**
 * Reads the last message under `key`, or undefined if nothing was ever stored. A fences header that
 * does not parse is `internal`: only the hub's bug or a foreign writer could store one.
 */
export async function readStoredIntent(
  jsm: JetStreamManager,
  prefix: string,
  key: string,
  what: string,
): Promise<StoredIntent | undefined> {
  const m = await jsm.direct.getMessage(intentsStream(prefix), {
    last_by_subj: intentKvSubject(key, prefix),
  });
  if (m === null) return undefined;
  const text = m.header.get(INTENT_FENCES_HEADER);
  const fences = parseFences(text);
  if (!fences.ok) {
    throw new FlotillaError(
      "internal",
      `${what}: the stored ${INTENT_FENCES_HEADER} header ${showValue(text)} is invalid: ${fences.problems.map(formatProblem).join("; ")}`,
      { problems: fences.problems },
    );
  }
  return {
    revision: m.seq,
    deleted: m.header.get(KV_OPERATION_HEADER) !== "",
    data: m.data,
    fences: fences.value,
  };
}

/** What to store under an intent key: the prepared intent, or a delete marker for `key`. */
export type IntentWrite =
  | { readonly type: "put"; readonly prepared: PreparedIntent }
  | { readonly type: "delete"; readonly key: string };

/**
 * Stores `write` with `fences` if the key's last revision is still `expected` (0: nothing stored
 * yet), and returns the new revision; a lost compare-and-set rejects with JetStream's error
 * (`isWrongLastRevision`).
 */
export async function writeStoredIntent(
  js: JetStreamClient,
  prefix: string,
  write: IntentWrite,
  fences: FenceMap,
  expected: number,
): Promise<number> {
  const h = headers();
  let key: string;
  let payload: Uint8Array;
  if (write.type === "put") {
    const { prepared } = write;
    key = prepared.key;
    payload = prepared.bytes;
    h.set(INTENT_HASH_HEADER, prepared.hash);
    h.set(INTENT_GENERATION_HEADER, String(prepared.intent.generation));
  } else {
    key = write.key;
    payload = new Uint8Array();
    h.set(KV_OPERATION_HEADER, "DEL");
  }
  const encoded = encodeFences(fences);
  if (encoded !== undefined) h.set(INTENT_FENCES_HEADER, encoded);
  const ack = await js.publish(intentKvSubject(key, prefix), payload, {
    headers: h,
    expect: { lastSubjectSequence: expected },
  });
  return ack.seq;
}
