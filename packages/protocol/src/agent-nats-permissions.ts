/**
 * What an agent may do in NATS (docs/security.md, "NATS: two accounts"): the subjects the hub puts
 * in an agent's user JWT, the inbox prefix the agent connects with, and the exports and imports
 * that join the agents' account to the hub's. The hub (minting users, checking the setup), its
 * `nats-setup` command (rendering the accounts) and the agents' tests all read this module, so the
 * three cannot drift apart.
 *
 * Agents live in an account of their own, apart from the flotilla account where the hub keeps its
 * state, the audit stream, the intents and the bundle content. Nothing an agent publishes, nor any
 * reply or delivery it can cause the server to send, lands in the flotilla account: a JetStream
 * request reaches it only through a service import, whose answer the server routes back into the
 * agents' account. (In one shared account, any request an agent may send carries a reply subject
 * of its choosing, and the server publishes the answer there; a reply subject of `flotilla.audit`
 * or of another cluster's KV key wrote into the audit stream or over that cluster's intent.)
 *
 * The flotilla account exports exactly three JetStream reads and one stream of subjects, all of
 * them answering with one message and none able to create anything:
 *
 * * a direct get by subject of an intent key, `$JS.API.DIRECT.GET.<intents stream>.$KV.<bucket>.*`
 *   (each agent's user may publish only its own key's);
 * * direct gets on the bundle-content object store, by subject of an object's metadata and by
 *   sequence (the body form, to read an object's chunks). The store's objects are sealed with a
 *   key per content (bundle-content-seal.ts) that the hub puts only in the intents of clusters the
 *   content is for: any agent can read the ciphertext, only those clusters can open it;
 * * the republished intents `<prefix>.intents.*` (each agent may subscribe to its own only).
 *
 * No agent may create a consumer, so none can choose a delivery subject.
 */
import {
  allIntentSubjects,
  bundleContentBucket,
  DEFAULT_INTENTS_PREFIX,
  intentKey,
  intentKvSubject,
  intentsBucket,
  intentsStream,
  intentSubject,
} from "./intents.js";

/** Publish and subscribe allow-lists of one agent's NATS user. */
export interface AgentNatsPermissions {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
}

/** One subject the flotilla account exports to the agents' account. */
export interface AgentsAccountExport {
  /** A stable name, the same in the export and its import. */
  readonly name: string;
  readonly subject: string;
  /** `service`: requests go in, one answer comes back; `stream`: messages flow out. */
  readonly type: "service" | "stream";
}

/**
 * The inbox prefix cluster `cluster`'s agent connects with (`inboxPrefix` of nats.js), e.g.
 * `_INBOX_edge-1`. Request replies go to subjects under it; an agent may subscribe only there, so
 * no agent can listen to another's replies.
 */
export function agentInboxPrefix(cluster: string): string {
  return `_INBOX_${intentKey(cluster)}`;
}

/** The object store's stream behind `bundleContentBucket(prefix)`. */
export function bundleContentStream(
  prefix: string = DEFAULT_INTENTS_PREFIX,
): string {
  return `OBJ_${bundleContentBucket(prefix)}`;
}

/** The direct-get subject that reads an object's metadata by its (encoded) name token. */
export function bundleContentMetaGetSubject(
  encodedName: string,
  prefix: string = DEFAULT_INTENTS_PREFIX,
): string {
  const bucket = bundleContentBucket(prefix);
  return `$JS.API.DIRECT.GET.${bundleContentStream(prefix)}.$O.${bucket}.M.${encodedName}`;
}

/** The body-form direct-get subject of the bundle-content stream (a message by sequence). */
export function bundleContentGetSubject(
  prefix: string = DEFAULT_INTENTS_PREFIX,
): string {
  return `$JS.API.DIRECT.GET.${bundleContentStream(prefix)}`;
}

/**
 * What the flotilla account exports and the agents' account imports, for intents prefix
 * `prefix`. The setup renders both accounts from this list, and the hub refuses to start when
 * the agents' account it is given imports anything else.
 */
export function agentsAccountExports(
  prefix: string = DEFAULT_INTENTS_PREFIX,
): readonly AgentsAccountExport[] {
  const bucket = intentsBucket(prefix);
  return [
    {
      name: "flotilla-intent-get",
      subject: `$JS.API.DIRECT.GET.${intentsStream(prefix)}.$KV.${bucket}.*`,
      type: "service",
    },
    {
      name: "flotilla-content-meta-get",
      subject: bundleContentMetaGetSubject("*", prefix),
      type: "service",
    },
    {
      name: "flotilla-content-get",
      subject: bundleContentGetSubject(prefix),
      type: "service",
    },
    {
      name: "flotilla-intents",
      subject: allIntentSubjects(prefix),
      type: "stream",
    },
  ];
}

/**
 * The permissions of cluster `cluster`'s agent in the agents' account: read its own intent and
 * bundle content, nothing else. Throws `invalid_argument` for a cluster name that is not an
 * intent key.
 */
export function agentNatsPermissions(
  cluster: string,
  prefix: string = DEFAULT_INTENTS_PREFIX,
): AgentNatsPermissions {
  return {
    publish: [
      // The intent watcher's direct get of its own key, the key named in the subject.
      `$JS.API.DIRECT.GET.${intentsStream(prefix)}.${intentKvSubject(cluster, prefix)}`,
      // The bundle-content reader: an object's metadata by its name, then its chunks by
      // sequence. Everything it can read there is sealed (see the module doc).
      bundleContentMetaGetSubject("*", prefix),
      bundleContentGetSubject(prefix),
    ],
    subscribe: [
      // The republished writes of its own intent key: one core subscription, no consumer.
      intentSubject(cluster, prefix),
      // Request replies (see agentInboxPrefix).
      `${agentInboxPrefix(cluster)}.>`,
    ],
  };
}
