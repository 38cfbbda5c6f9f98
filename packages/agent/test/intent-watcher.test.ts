// The agent's intent watcher against a real nats-server. The hub is played by `TestHub`, which
// writes documents exactly as @flotilla/protocol defines them (the hub's own publisher is tested in
// packages/hub; hub and agent never import each other).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { randomBytes } from "node:crypto";
import { jetstream } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { Objm } from "@nats-io/obj";
import {
  connect,
  type ConnectionOptions,
  type NatsConnection,
} from "@nats-io/transport-node";
import type { FlotillaError, ClusterIntent } from "@flotilla/core";
import { type IntentWatcher, type IntentWatcherOptions } from "@flotilla/agent";
import {
  createIntentWatcher,
  getBundleContent,
  type IntentEvent,
} from "@flotilla/agent/testing";
import {
  bundleContentBucket,
  deriveContentKey,
  encodeIntentDocument,
  intentsBucketSettings,
  sealContent,
  sealedObjectName,
  sha256Digest,
} from "@flotilla/protocol";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";

function connectTo(
  server: NatsServer,
  options: ConnectionOptions = {},
): Promise<NatsConnection> {
  return connect({
    servers: server.url,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 50,
    ...options,
  });
}

function intentFor(
  cluster: string,
  generation: number,
  revision = `r${String(generation)}`,
): ClusterIntent {
  return {
    apiVersion: "flotilla.dev/v1",
    cluster,
    generation,
    bundles: { web: { revision, digest: sha256Digest(revision) } },
  };
}

/** Stands in for the hub: creates the bucket as the hub does and writes documents into it. */
class TestHub implements AsyncDisposable {
  private constructor(
    readonly nc: NatsConnection,
    readonly kv: KV,
    readonly prefix: string,
  ) {}

  static async open(server: NatsServer, prefix: string): Promise<TestHub> {
    const nc = await connectTo(server);
    const { bucket, ...settings } = intentsBucketSettings(prefix);
    // Short requests: a write sent as NATS restarts is lost, and waitFor retries it sooner.
    const kv = await new Kvm(jetstream(nc, { timeout: 500 })).create(
      bucket,
      settings,
    );
    return new TestHub(nc, kv, prefix);
  }

  /** Stores the intent; resolves with its revision. */
  publish(intent: ClusterIntent): Promise<number> {
    return this.kv.put(intent.cluster, encodeIntentDocument(intent).bytes);
  }

  putRaw(cluster: string, value: string | Uint8Array): Promise<number> {
    return this.kv.put(cluster, value);
  }

  remove(cluster: string): Promise<void> {
    return this.kv.delete(cluster);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.nc.close();
  }
}

/** A started watcher that records what it emits and reports. */
interface Recorder extends AsyncDisposable {
  readonly watcher: IntentWatcher;
  readonly events: IntentEvent[];
  readonly errors: FlotillaError[];
  generations(): (number | "deleted")[];
}

async function watch(
  nc: NatsConnection,
  options: Omit<IntentWatcherOptions, "onEvent" | "onError">,
): Promise<Recorder> {
  const events: IntentEvent[] = [];
  const errors: FlotillaError[] = [];
  const watcher = createIntentWatcher(
    { nc },
    {
      resyncIntervalMs: 0,
      timeoutMs: 1_000,
      ...options,
      onEvent: (e) => events.push(e),
      onError: (e) => errors.push(e),
    },
  );
  await watcher.start();
  return {
    watcher,
    events,
    errors,
    generations: () =>
      events.map((e) =>
        e.type === "IntentReceived" ? e.intent.generation : "deleted",
      ),
    [Symbol.asyncDispose]: () => watcher.stop(),
  };
}

function generationOf(event: IntentEvent | undefined): number | undefined {
  return event?.type === "IntentReceived" ? event.intent.generation : undefined;
}

let prefixes = 0;
const nextPrefix = (): string => `t${String(++prefixes)}`;

describe("shared server", () => {
  let server: NatsServer;
  let nc: NatsConnection;
  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connectTo(server);
  });
  afterAll(async () => {
    await nc.close();
    await server.stop();
  });

  test("a published intent reaches the watcher with its hash and revision", async () => {
    await using hub = await TestHub.open(server, nextPrefix());
    await using w = await watch(nc, { cluster: "web-1", prefix: hub.prefix });
    expect(w.watcher.current()).toBeUndefined();
    const intent = intentFor("web-1", 1);
    const revision = await hub.publish(intent);
    await waitFor(() => w.events.length === 1, { message: "the intent" });
    expect(w.events).toEqual([
      {
        type: "IntentReceived",
        cluster: "web-1",
        intent,
        hash: encodeIntentDocument(intent).hash,
        revision,
      },
    ]);
    expect(w.watcher.current()).toEqual(w.events[0]);
    expect(w.errors).toEqual([]);
  });

  test("a watcher started after several publishes sees only the latest", async () => {
    await using hub = await TestHub.open(server, nextPrefix());
    for (let g = 1; g <= 5; g++) await hub.publish(intentFor("web-1", g));
    await hub.publish(intentFor("web-2", 9));
    await using w = await watch(nc, { cluster: "web-1", prefix: hub.prefix });
    // start() resolves after the first read: the latest is current at once.
    expect(generationOf(w.watcher.current())).toBe(5);
    expect(w.generations()).toEqual([5]);
  });

  test("rapid publishes arrive in generation order, and no stale generation is emitted", async () => {
    await using hub = await TestHub.open(server, nextPrefix());
    await using early = await watch(nc, {
      cluster: "web-1",
      prefix: hub.prefix,
    });
    const count = 300;
    const puts: Promise<number>[] = [];
    let late: Promise<Recorder> | undefined;
    for (let g = 1; g <= count; g++) {
      puts.push(hub.publish(intentFor("web-1", g)));
      // A watcher starting mid-stream: its read races the republished messages.
      if (g === count / 2)
        late = watch(nc, { cluster: "web-1", prefix: hub.prefix });
    }
    await Promise.all(puts);
    await using racing = await late!;
    for (const w of [early, racing]) {
      await waitFor(() => generationOf(w.watcher.current()) === count, {
        message: `generation ${String(count)}`,
      });
      const seen = w.generations() as number[];
      expect(seen.every((g, i) => i === 0 || g > seen[i - 1]!)).toBe(true);
      expect(w.errors).toEqual([]);
    }
    expect(early.generations()).toHaveLength(count);
  });

  test("a repeated generation is skipped quietly, a lower one is reported and skipped", async () => {
    await using hub = await TestHub.open(server, nextPrefix());
    await using w = await watch(nc, { cluster: "web-1", prefix: hub.prefix });
    await hub.publish(intentFor("web-1", 3));
    await hub.publish(intentFor("web-1", 3)); // the same document again, a new revision
    await hub.publish(intentFor("web-1", 2));
    await hub.publish(intentFor("web-1", 3, "other"));
    await hub.publish(intentFor("web-1", 4));
    await waitFor(() => generationOf(w.watcher.current()) === 4, {
      message: "generation 4",
    });
    expect(w.generations()).toEqual([3, 4]);
    expect(w.errors.map((e) => e.code)).toEqual([
      "failed_precondition",
      "failed_precondition",
    ]);
    expect(w.errors[0]?.message).toMatch(
      /^Ignoring the intent of cluster "web-1" at revision \d+: its generation 2 is not newer than generation 3, already received$/,
    );
  });

  test("malformed and oversized values are reported and skipped; the watcher carries on", async () => {
    await using hub = await TestHub.open(server, nextPrefix());
    await using w = await watch(nc, {
      cluster: "web-1",
      prefix: hub.prefix,
      maxDocumentBytes: 1_000,
    });
    await hub.publish(intentFor("web-1", 1));
    const junk = await hub.putRaw("web-1", "{not json");
    await hub.putRaw(
      "web-1",
      encodeIntentDocument(intentFor("web-2", 2)).bytes,
    );
    await hub.publish(intentFor("web-1", 3, "x".repeat(200)));
    await hub.putRaw(
      "web-1",
      JSON.stringify({ hash: "sha256:0", pad: "x".repeat(2_000) }),
    );
    await hub.publish(intentFor("web-1", 5));
    await waitFor(() => generationOf(w.watcher.current()) === 5, {
      message: "generation 5",
    });
    expect(w.generations()).toEqual([1, 5]);
    expect(w.errors.map((e) => e.code)).toEqual(
      Array(4).fill("invalid_argument"),
    );
    expect(w.errors[0]?.message).toMatch(
      new RegExp(
        `^Ignoring the intent of cluster "web-1" at revision ${String(junk)}: is not UTF-8 JSON`,
      ),
    );
    expect(w.errors[1]?.problems.map((p) => p.path)).toEqual([
      "intent.cluster",
    ]);
    expect(w.errors[2]?.problems.map((p) => p.path)).toEqual([
      "intent.bundles.web.revision",
    ]);
    expect(w.errors[3]?.message).toMatch(/more than the 1000 allowed/);
  });

  test("a deleted key is surfaced as IntentDeleted, and the cluster may start over", async () => {
    await using hub = await TestHub.open(server, nextPrefix());
    await using w = await watch(nc, { cluster: "web-1", prefix: hub.prefix });
    await hub.publish(intentFor("web-1", 5));
    await hub.remove("web-1");
    await waitFor(() => w.watcher.current()?.type === "IntentDeleted", {
      message: "the deletion",
    });
    await using after = await watch(nc, {
      cluster: "web-1",
      prefix: hub.prefix,
    });
    expect(after.watcher.current()).toMatchObject({
      type: "IntentDeleted",
      cluster: "web-1",
    });
    await hub.publish(intentFor("web-1", 1));
    await waitFor(() => generationOf(w.watcher.current()) === 1, {
      message: "generation 1 after the deletion",
    });
    expect(w.generations()).toEqual([5, "deleted", 1]);
    expect(w.errors).toEqual([]);
  });

  test("50 watchers on one connection each see only their own cluster", async () => {
    await using hub = await TestHub.open(server, nextPrefix());
    const shared = await connectTo(server);
    try {
      const clusters = Array.from({ length: 50 }, (_, i) => `c-${String(i)}`);
      const recorders = await Promise.all(
        clusters.map((cluster) =>
          watch(shared, { cluster, prefix: hub.prefix }),
        ),
      );
      await Promise.all(
        clusters.map((c, i) => hub.publish(intentFor(c, i + 1))),
      );
      await waitFor(
        () =>
          recorders.every(
            (r, i) => generationOf(r.watcher.current()) === i + 1,
          ),
        { message: "every watcher's intent" },
      );
      recorders.forEach((r, i) => {
        expect(r.events.map((e) => e.cluster)).toEqual([clusters[i]]);
        expect(r.errors).toEqual([]);
      });
      await Promise.all(recorders.map((r) => r.watcher.stop()));
    } finally {
      await shared.close();
    }
  });

  test("events() yields the current intent, then later ones, until aborted", async () => {
    await using hub = await TestHub.open(server, nextPrefix());
    await hub.publish(intentFor("web-1", 1));
    await using w = await watch(nc, { cluster: "web-1", prefix: hub.prefix });
    const controller = new AbortController();
    const seen: (number | undefined)[] = [];
    const iterating = (async () => {
      for await (const event of w.watcher.events({
        signal: controller.signal,
      })) {
        seen.push(generationOf(event));
        if (seen.length === 1) await hub.publish(intentFor("web-1", 2));
        if (seen.length === 2) controller.abort();
      }
    })();
    await iterating;
    expect(seen).toEqual([1, 2]);
  });

  test("a stopped watcher emits nothing more", async () => {
    await using hub = await TestHub.open(server, nextPrefix());
    await using stopped = await watch(nc, {
      cluster: "web-1",
      prefix: hub.prefix,
    });
    await using witness = await watch(nc, {
      cluster: "web-1",
      prefix: hub.prefix,
    });
    await stopped.watcher.stop();
    await hub.publish(intentFor("web-1", 1));
    await waitFor(() => witness.events.length === 1, {
      message: "the witness",
    });
    await nc.flush();
    expect(stopped.events).toEqual([]);
    await expect(stopped.watcher.start()).rejects.toMatchObject({
      code: "failed_precondition",
    });
  });

  test("a cluster name that is not a key is refused", () => {
    expect(() => createIntentWatcher({ nc }, { cluster: "Web.1" })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
  });

  test("start retries until the hub has created the bucket", async () => {
    const prefix = nextPrefix();
    const errors: FlotillaError[] = [];
    await using watcher = createIntentWatcher(
      { nc },
      {
        cluster: "web-1",
        prefix,
        timeoutMs: 300,
        retryMinMs: 20,
        retryMaxMs: 50,
        resyncIntervalMs: 0,
        onError: (e) => errors.push(e),
      },
    );
    const started = watcher.start();
    await waitFor(() => errors.length > 0, { message: "a failed read" });
    await using hub = await TestHub.open(server, prefix);
    await hub.publish(intentFor("web-1", 2));
    await started;
    await waitFor(() => generationOf(watcher.current()) === 2, {
      message: "generation 2",
    });
  });

  describe("getBundleContent", () => {
    const secret = randomBytes(32);
    const sealedPut = async (
      prefix: string,
      content: Uint8Array,
    ): Promise<{ digest: string; key: string }> => {
      const store = await new Objm(jetstream(nc)).create(
        bundleContentBucket(prefix),
      );
      const digest = sha256Digest(content);
      const key = deriveContentKey(secret, digest);
      await store.putBlob(
        { name: sealedObjectName(key) },
        sealContent(content, key, digest),
      );
      return { digest, key };
    };

    test("returns the stored content once its key opens it and its digest checks out", async () => {
      const prefix = nextPrefix();
      const content = new TextEncoder().encode(
        "kind: Service\n".repeat(20_000),
      );
      const ref = await sealedPut(prefix, content);
      expect(await getBundleContent({ nc }, ref, { prefix })).toEqual(content);
      await expect(
        getBundleContent({ nc }, ref, { prefix, maxBytes: 1_000 }),
      ).rejects.toMatchObject({ code: "failed_precondition" });
    });

    test("refuses stored bytes that were changed", async () => {
      const prefix = nextPrefix();
      const ref = await sealedPut(
        prefix,
        new TextEncoder().encode("the real manifests"),
      );
      const store = await new Objm(jetstream(nc)).open(
        bundleContentBucket(prefix),
      );
      const name = sealedObjectName(ref.key);
      const sealed = (await store.getBlob(name)) ?? new Uint8Array();
      const last = sealed.byteLength - 1;
      sealed[last] = (sealed[last] ?? 0) ^ 1;
      await store.putBlob({ name }, sealed);
      const error = await getBundleContent({ nc }, ref, { prefix }).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: "internal" });
      expect((error as Error).message).toBe(
        `Cannot open bundle content ${ref.digest}: the key does not open it (sealed with another key, for other content, or changed)`,
      );
    });

    test("missing content, a missing bucket and a malformed key are told apart", async () => {
      const prefix = nextPrefix();
      const digest = sha256Digest("absent");
      const ref = { digest, key: deriveContentKey(secret, digest) };
      // No bucket: nothing answers the direct get, an outage as far as the agent can tell.
      await expect(
        getBundleContent({ nc }, ref, { prefix, timeoutMs: 500 }),
      ).rejects.toMatchObject({
        code: expect.stringMatching(
          /^(unavailable|deadline_exceeded)$/,
        ) as unknown,
      });
      await new Objm(jetstream(nc)).create(bundleContentBucket(prefix));
      await expect(
        getBundleContent({ nc }, ref, { prefix }),
      ).rejects.toMatchObject({
        code: "not_found",
      });
      await expect(
        getBundleContent({ nc }, { digest, key: "nope" }, { prefix }),
      ).rejects.toMatchObject({
        code: "invalid_argument",
      });
    });
  });
});

describe("outages", () => {
  test("after a NATS server restart the watcher recovers on its own and follows new publishes", async () => {
    await using server = await startNatsServer();
    await using hub = await TestHub.open(server, "flotilla");
    const nc = await connectTo(server);
    try {
      await using w = await watch(nc, { cluster: "web-1" });
      await hub.publish(intentFor("web-1", 1));
      await waitFor(() => w.events.length === 1, { message: "generation 1" });

      await server.restart();
      await waitFor(() => hub.publish(intentFor("web-1", 2)), {
        timeoutMs: 10_000,
        message: "the hub to publish after the restart",
      });
      await waitFor(() => generationOf(w.watcher.current()) === 2, {
        timeoutMs: 10_000,
        message: "generation 2 after the restart",
      });
      // Resync is off and the connection is up: only the subscription can deliver this one.
      await hub.publish(intentFor("web-1", 3));
      await waitFor(() => generationOf(w.watcher.current()) === 3, {
        message: "generation 3 through the subscription",
      });
      expect(w.generations()).toEqual([1, 2, 3]);
    } finally {
      await nc.close();
    }
  });

  test("a publish made while the watcher's connection was down is read after it reconnects", async () => {
    await using server = await startNatsServer();
    await using hub = await TestHub.open(server, "flotilla");
    // The watcher reconnects slowly, the hub quickly: the hub publishes in between.
    const nc = await connectTo(server, { reconnectTimeWait: 2_000 });
    let watcherConnected = true;
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === "disconnect") watcherConnected = false;
        if (s.type === "reconnect") watcherConnected = true;
      }
    })();
    try {
      await using w = await watch(nc, { cluster: "web-1" });
      await hub.publish(intentFor("web-1", 1));
      await waitFor(() => w.events.length === 1, { message: "generation 1" });

      await server.restart();
      await waitFor(() => hub.publish(intentFor("web-1", 2)), {
        timeoutMs: 10_000,
        message: "the hub to publish after the restart",
      });
      // Otherwise this test would not show what it claims.
      expect(watcherConnected).toBe(false);
      await waitFor(() => generationOf(w.watcher.current()) === 2, {
        timeoutMs: 10_000,
        message: "generation 2 after the watcher reconnects",
      });
      expect(watcherConnected).toBe(true);
      expect(w.generations()).toEqual([1, 2]);
    } finally {
      await nc.close();
    }
  });
});
