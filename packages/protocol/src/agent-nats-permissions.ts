/**
 * What an agent may do in NATS (issue 6, "NATS authorization"): the exact subjects the hub puts in
 * an agent's user JWT, and the inbox prefix the agent must connect with so that its replies land
 * on subjects it may subscribe to. Both sides use this module: the hub to mint credentials, the
 * agent (and its tests) to connect. Everything not listed is denied by the server.
 *
 * The set was found by running the agent's real code (intents/intent-watcher.ts and
 * intents/bundle-content.ts, nats.js 3.4) against nats-server 2.9.10 with only these grants; each
 * entry says which call needs it. Every grant names its subject in the subject itself, never in a
 * request body: the agent reads its own intent key, and a bundle-content object only by its name
 * (a content digest, which it learns only from its own intent). It cannot list the object store,
 * get its messages by sequence (`STREAM.MSG.GET`, whose selector is in the body, is not granted),
 * nor ask for account or stream info (only the info of one consumer that is never created).
 *
 * Known limit: the object grants end in a `*` token (any name, any chunk nuid), and nats-server
 * matches a published subject token that is itself a literal `*` or `>` against a `*` grant; a deny
 * list cannot name a literal wildcard either. So a client that deliberately publishes
 * `$JS.API.DIRECT.GET.<stream>.$O.<bucket>.M.*` gets the metadata of the most recently stored
 * object, and one that creates a consumer on `…CONSUMER.CREATE.<stream>.<name>.$O.<bucket>.C.>`
 * (filter `$O.<bucket>.C.>`) reads every chunk of the store. nats.js never sends these; closing
 * them needs isolation by stream (a bucket per cluster), not by subject. The agent's tests pin
 * this behaviour so that a change in it is noticed.
 */
import {
  bundleContentBucket,
  DEFAULT_INTENTS_PREFIX,
  intentKey,
  intentKvSubject,
  intentsStream,
  intentSubject,
} from "./intents.js";

/** Publish and subscribe allow-lists of one agent's NATS user. */
export interface AgentNatsPermissions {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
}

/**
 * The inbox prefix cluster `cluster`'s agent connects with (`inboxPrefix` of nats.js), e.g.
 * `_INBOX_edge-1`. Request replies and push-consumer deliveries go to subjects under it; an agent
 * may subscribe only there, so no agent can listen to another's replies.
 */
export function agentInboxPrefix(cluster: string): string {
  return `_INBOX_${intentKey(cluster)}`;
}

/**
 * A consumer name nobody creates on the bundle-content stream: asking for its info is how an agent
 * tells a missing bucket ("stream not found") from an outage when a direct get goes unanswered.
 */
export const BUNDLE_CONTENT_PROBE_CONSUMER = "flotilla-existence-probe";

/** The object store's stream behind `bundleContentBucket(prefix)`. */
function bundleContentStream(prefix: string): string {
  return `OBJ_${bundleContentBucket(prefix)}`;
}

/**
 * The permissions of cluster `cluster`'s agent: read its own intent and bundle content by name,
 * nothing else. Throws `invalid_argument` for a cluster name that is not an intent key.
 */
export function agentNatsPermissions(
  cluster: string,
  prefix: string = DEFAULT_INTENTS_PREFIX,
): AgentNatsPermissions {
  const objects = bundleContentStream(prefix);
  const bucket = bundleContentBucket(prefix);
  return {
    publish: [
      // The intent watcher's direct get of its own key. nats.js puts `last_by_subj` in the
      // subject (no body), so the grant names the one key; the other form of the API
      // (`$JS.API.DIRECT.GET.<stream>` with a JSON body) is not granted.
      `$JS.API.DIRECT.GET.${intentsStream(prefix)}.${intentKvSubject(cluster, prefix)}`,
      // getBundleContent's read of an object's metadata: a direct get of the last message on
      // `$O.<bucket>.M.<name>` (the name in padded base64url, one token), again with the
      // subject in the request's subject. The hub creates the stream with allow_direct.
      `$JS.API.DIRECT.GET.${objects}.$O.${bucket}.M.*`,
      // The object's chunks come through an ordered push consumer created with the filtered
      // form of the API (`CONSUMER.CREATE.<stream>.<name>.<filter>`); the server refuses a
      // config whose filter differs from the subject's, so only chunk subjects can be read,
      // and only with the nuid the metadata gives (see the module doc for wildcards).
      `$JS.API.CONSUMER.CREATE.${objects}.*.$O.${bucket}.C.*`,
      // Flow-control replies of that push consumer (large objects).
      `$JS.FC.${objects}.>`,
      // A direct get to a missing stream goes unanswered, like one in an outage: the info of
      // this one (never created) consumer tells them apart. An exact subject: it answers
      // "stream not found" or "consumer not found", nothing about the stream's content.
      `$JS.API.CONSUMER.INFO.${objects}.${BUNDLE_CONTENT_PROBE_CONSUMER}`,
    ],
    subscribe: [
      // The republished writes of its own intent key: one core subscription, no consumer.
      intentSubject(cluster, prefix),
      // Request replies and push-consumer deliveries (see agentInboxPrefix).
      `${agentInboxPrefix(cluster)}.>`,
    ],
  };
}
