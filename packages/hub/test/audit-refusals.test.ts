/**
 * A flood of refused calls against a whole hub over real gRPC with TLS: the answers stay what
 * they were, but the audit stream records at most the configured number per peer and window, and
 * one summary per peer, method and code counts the rest exactly, as does the metric. The hub
 * listens on `[::]`, so clients of 127.0.0.1 and ::1 are two peers.
 */
import { callUnary, type wire } from "@flotilla/protocol";
import { promtoolCheckMetrics, waitFor } from "@flotilla/testkit";
import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../src/audit/audit-log.js";
import { createHubMetrics, type HubMetrics } from "../src/metrics/metrics.js";
import { hubObserverOf } from "../src/metrics/metrics-observer.js";
import { newKeyAndCsr } from "./security-keys.js";
import { startSecureTestHub, type SecureTestHub } from "./security-harness.js";

const WINDOW_MS = 60_000;
const PER_PEER = 20;

/** The value of counter `name` with `labels`, or 0 when it has no such series. */
async function counter(
  metrics: HubMetrics,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  const values = (await metric?.get())?.values ?? [];
  const found = values.find((v) =>
    Object.entries(labels).every(([k, l]) => v.labels[k] === l),
  );
  return found?.value ?? 0;
}

/** `count` calls of `call`, all at once; resolves with each one's error code (or "ok"). */
function flood(count: number, call: () => Promise<unknown>): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, () =>
      call().then(
        () => "ok",
        (error: unknown) => (error as { code: string }).code,
      ),
    ),
  );
}

async function allEvents(t: SecureTestHub): Promise<AuditEvent[]> {
  return [...(await t.audit.list({}, { pageSize: 1000 })).events];
}

async function hubWithMetrics() {
  const metrics = createHubMetrics({ defaultMetrics: false });
  const t = await startSecureTestHub({
    adminAuth: true,
    listen: "[::]:0",
    observer: hubObserverOf(metrics),
    refusalAudit: { perPeer: PER_PEER, windowMs: WINDOW_MS, maxPeers: 100 },
  });
  return {
    t,
    metrics,
    [Symbol.asyncDispose]: () => t[Symbol.asyncDispose](),
  };
}

/** Moves the clock past the window and waits for the hub's tick to write the summaries. */
async function endWindow(t: SecureTestHub): Promise<readonly AuditEvent[]> {
  t.clock.advance(WINDOW_MS);
  return waitFor(
    async () => {
      const { events } = await t.audit.list({ targetKind: "AuditSummary" });
      return events.length > 0 ? events : undefined;
    },
    { timeoutMs: 10_000, message: "the summary record" },
  );
}

describe("refused calls in the audit log", () => {
  it("records the first of one peer's 500 refused admin calls, counts the rest in one summary, and still records another peer's", async () => {
    await using hub = await hubWithMetrics();
    const { t, metrics } = hub;
    const stranger = t.adminClient(undefined, "127.0.0.1");
    const answers = await flood(500, () =>
      callUnary(stranger, "listClusters", {}),
    );
    expect(new Set(answers)).toEqual(new Set(["unauthenticated"]));
    expect(answers).toHaveLength(500);

    // Another address, while the first is past its limit: recorded one by one.
    const neighbour = t.adminClient(undefined, "[::1]");
    expect(
      await flood(5, () => callUnary(neighbour, "listClusters", {})),
    ).toEqual(Array(5).fill("unauthenticated"));

    const before = await allEvents(t);
    const fromStranger = before.filter((e) =>
      /^anonymous@(::ffff:)?127\.0\.0\.1:\d+$/.test(e.actor),
    );
    const fromNeighbour = before.filter((e) =>
      /^anonymous@::1:\d+$/.test(e.actor),
    );
    expect(fromStranger).toHaveLength(PER_PEER);
    expect(fromNeighbour).toHaveLength(5);
    expect(before).toHaveLength(PER_PEER + 5);

    const summaries = await endWindow(t);
    expect(summaries).toMatchObject([
      {
        actor: "anonymous@127.0.0.1",
        role: "",
        method: "/flotilla.v1.AdminService/ListClusters",
        targetKind: "AuditSummary",
        outcome: "Denied",
        errorCode: "unauthenticated",
        message: expect.stringMatching(
          /^480 refused calls from anonymous@127\.0\.0\.1 not recorded individually between \S+Z and \S+Z/,
        ),
      },
    ]);
    expect(await allEvents(t)).toHaveLength(PER_PEER + 5 + 1);
    expect(
      await counter(metrics, "flotilla_hub_audit_refusals_suppressed_total", {
        method: "ListClusters",
      }),
    ).toBe(480);
    expect(
      await counter(metrics, "flotilla_hub_admin_calls_denied_total", {
        method: "ListClusters",
        code: "unauthenticated",
      }),
    ).toBe(505);
    expect(
      promtoolCheckMetrics(await metrics.registry.metrics()).problems,
    ).toEqual([]);

    // A new window: the stranger is recorded again, from the first refusal on.
    await expect(callUnary(stranger, "listClusters", {})).rejects.toMatchObject(
      { code: "unauthenticated" },
    );
    expect(await allEvents(t)).toHaveLength(PER_PEER + 5 + 2);
  });

  it("writes the summary of a window still open when the hub stops", async () => {
    await using hub = await hubWithMetrics();
    const { t } = hub;
    const stranger = t.adminClient();
    await flood(PER_PEER + 10, () => callUnary(stranger, "listBundles", {}));
    await t.restart();
    const { events } = await t.audit.list({ targetKind: "AuditSummary" });
    expect(events.map((e) => [e.method, e.message.split(" from")[0]])).toEqual([
      ["/flotilla.v1.AdminService/ListBundles", "10 refused calls"],
    ]);
  });

  it("limits refused registrations the same way, under the caller's address", async () => {
    await using hub = await hubWithMetrics();
    const { t, metrics } = hub;
    const { csrPem } = await newKeyAndCsr();
    const agent = t.agentClient();
    const request: wire.RegisterRequest = {
      bootstrapToken: `flotilla-bt.bt-00000000.${"A".repeat(43)}`,
      clusterName: "web-1",
      csrPem,
      agentVersion: "test",
    };
    const answers = await flood(100, () =>
      callUnary(agent, "register", request),
    );
    expect(new Set(answers)).toEqual(new Set(["unauthenticated"]));
    const recorded = await t.audit.list({
      method: "/flotilla.v1.AgentService/Register",
    });
    expect(recorded.events).toHaveLength(PER_PEER);
    const summaries = await endWindow(t);
    expect(summaries).toMatchObject([
      {
        actor: "anonymous@127.0.0.1",
        method: "/flotilla.v1.AgentService/Register",
        errorCode: "unauthenticated",
        message: expect.stringMatching(/^80 refused calls /),
      },
    ]);
    expect(
      await counter(metrics, "flotilla_hub_audit_refusals_suppressed_total", {
        method: "Register",
      }),
    ).toBe(80);
  });
});
