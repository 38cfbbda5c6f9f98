/**
 * Every name the hub's state uses in NATS: KV bucket names, the keys inside them and the subjects
 * that address them. Nothing else in the hub spells one out.
 *
 * Key rules (the StateStore port enforces them on every adapter, so the in-memory store rejects
 * exactly what JetStream KV would): a key is one or more tokens joined by `.`; a token is
 * 1+ characters of `A-Z a-z 0-9 - _ = /`; at most {@link MAX_KEY_LENGTH} characters. That is NATS
 * KV's own rule minus the wildcard-prone and empty-token cases. DNS names without dots (cluster
 * names, run names) are keys as they are; anything else goes through {@link encodeKeyToken}.
 */

/** The hub's collections of state; each is one JetStream KV bucket. */
export const COLLECTION_NAMES = [
  "clusters",
  "cluster-groups",
  "strategies",
  "bundles",
  "bundle-revisions",
  "runs",
  "gate-decisions",
  "bootstrap-tokens",
  "identities",
  "security",
  "releases",
  // Auto-upgrade profiles, and the target each last made a run for (docs/engine.md#auto-upgrade-profiles).
  "auto-upgrade-profiles",
  "auto-upgrade-runs",
  // Git repositories (docs/gitops.md): specs, their credentials apart, sync status, bundle claims.
  "gitrepos",
  "gitrepo-credentials",
  "gitrepo-status",
  "gitrepo-bundles",
  // Metric gates between bundle partitions (docs/semantics.md#partition-gates), apart from bundles.
  "bundle-gates",
] as const;

/** One of {@link COLLECTION_NAMES}. */
export type CollectionName = (typeof COLLECTION_NAMES)[number];

/** Bucket names start with this unless the store is configured otherwise. */
export const DEFAULT_BUCKET_PREFIX = "flotilla";

/** Longest key accepted, in characters (all ASCII, so also bytes). */
export const MAX_KEY_LENGTH = 512;

const TOKEN = "[-_=/A-Za-z0-9]+";
const KEY_PATTERN = new RegExp(`^${TOKEN}(?:\\.${TOKEN})*$`);
const PREFIX_PATTERN = /^[-_=/.A-Za-z0-9]*$/;
// Characters a token may hold unescaped. `=` is the escape character, `/` is left to callers
// that want a visible separator.
const PLAIN_TOKEN_CHAR = /^[-_A-Za-z0-9]$/;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** The KV bucket holding `collection`, e.g. `flotilla-clusters`. */
export function bucketName(prefix: string, collection: CollectionName): string {
  return `${prefix}-${collection}`;
}

// The rule for bucket prefixes is NATS's, shared with every JetStream adapter.
export { bucketPrefixProblem } from "@flotilla/node";

/** Why `key` is not a valid state key, or undefined when it is. */
export function keyProblem(key: string): string | undefined {
  if (key.length === 0) return "must not be empty";
  if (key.length > MAX_KEY_LENGTH) {
    return `is ${String(key.length)} characters long, more than the ${String(MAX_KEY_LENGTH)} allowed`;
  }
  if (!KEY_PATTERN.test(key)) {
    return "must be tokens of A-Z, a-z, 0-9, -, _, = and / joined by single dots";
  }
  return undefined;
}

/** Why `prefix` cannot select keys in a list or watch, or undefined when it can. */
export function prefixProblem(prefix: string): string | undefined {
  if (prefix.length > MAX_KEY_LENGTH) return "is longer than any key";
  if (!PREFIX_PATTERN.test(prefix)) {
    return "may only hold A-Z, a-z, 0-9, -, _, =, / and .";
  }
  return undefined;
}

/**
 * The KV key filter that narrows a listing to `prefix` on the server: the complete tokens of the
 * prefix followed by `>` (`web.r` → `web.>`). Keys must still be checked with `startsWith`,
 * because NATS wildcards match whole tokens only. `>` alone matches everything.
 */
export function keyFilterForPrefix(prefix: string): string {
  const lastDot = prefix.lastIndexOf(".");
  if (lastDot <= 0 || prefix.includes("..")) return ">";
  return `${prefix.slice(0, lastDot)}.>`;
}

/** The subject of `key` (or of a key filter) in `bucket`: `$KV.<bucket>.<key>`. */
export function kvSubject(bucket: string, key: string): string {
  return `$KV.${bucket}.${key}`;
}

/** The JetStream stream behind `bucket`. */
export function kvStreamName(bucket: string): string {
  return `KV_${bucket}`;
}

/**
 * Makes any string a single key token: characters outside `[-_A-Za-z0-9]` become `=XX` per UTF-8
 * byte (upper-case hex), so the result is reversible with {@link decodeKeyToken} and never
 * contains `.`. DNS labels come out unchanged.
 */
export function encodeKeyToken(text: string): string {
  if (text.length === 0) return "=";
  let out = "";
  for (const char of text) {
    if (PLAIN_TOKEN_CHAR.test(char)) {
      out += char;
      continue;
    }
    for (const byte of utf8.encode(char)) {
      out += `=${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    }
  }
  return out;
}

/** Reverses {@link encodeKeyToken}. */
export function decodeKeyToken(token: string): string {
  if (token === "=") return "";
  const bytes: number[] = [];
  for (let i = 0; i < token.length; i++) {
    const char = token.charAt(i);
    if (char === "=") {
      bytes.push(Number.parseInt(token.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(char.charCodeAt(0));
    }
  }
  return fromUtf8.decode(new Uint8Array(bytes));
}

/** Key of a named object (cluster, cluster group, strategy, bundle, run). */
export function nameKey(name: string): string {
  return encodeKeyToken(name);
}

/**
 * Key of one revision of a bundle. The revision is zero-padded to 10 digits so that keys sort
 * like numbers; list with {@link bundleRevisionsPrefix} to get one bundle's revisions in order.
 */
export function bundleRevisionKey(
  bundleName: string,
  revision: number,
): string {
  return `${bundleRevisionsPrefix(bundleName)}${String(revision).padStart(10, "0")}`;
}

/** The prefix shared by every revision key of one bundle. */
export function bundleRevisionsPrefix(bundleName: string): string {
  return `${encodeKeyToken(bundleName)}.`;
}

/**
 * Keys of one stored run (runs/run-log.ts): the head is the run's name; its journal slots and
 * snapshot parts sit under it, so {@link runRecordsPrefix} selects everything but the head.
 */
export function runHeadKey(runName: string): string {
  return nameKey(runName);
}

/** The prefix of a run's journal slots and snapshot parts. */
export function runRecordsPrefix(runName: string): string {
  return `${nameKey(runName)}.`;
}

/** Key of journal slot `slot` of a run. */
export function runJournalKey(runName: string, slot: number): string {
  return `${runRecordsPrefix(runName)}j.${String(slot)}`;
}

/** True for the key of one of a run's journal slots. */
export function isRunJournalKey(runName: string, key: string): boolean {
  return key.startsWith(`${runRecordsPrefix(runName)}j.`);
}

/** Key of part `index` of a run snapshot kept in `slot` ("a" or "b"). */
export function runSnapshotPartKey(
  runName: string,
  slot: string,
  index: number,
): string {
  return `${runRecordsPrefix(runName)}p.${slot}.${String(index)}`;
}

/** Key of the decision on one gate of one run. */
export function gateDecisionKey(runName: string, gateName: string): string {
  return `${gateDecisionsPrefix(runName)}${encodeKeyToken(gateName)}`;
}

/** The prefix shared by every gate decision of one run. */
export function gateDecisionsPrefix(runName: string): string {
  return `${encodeKeyToken(runName)}.`;
}

/** The KV bucket of leases and live replicas, e.g. `flotilla-leases` (entries expire: its TTL). */
export function leasesBucketName(prefix: string): string {
  return `${prefix}-leases`;
}

/** The key of the lease on a unit of scheduling work (`run/<name>`, `bundles`). */
export function leaseKey(unit: string): string {
  return `lease.${encodeKeyToken(unit)}`;
}

/** The key under which a live replica announces itself. */
export function replicaKey(replicaId: string): string {
  return `replica.${encodeKeyToken(replicaId)}`;
}
