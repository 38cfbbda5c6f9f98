// The agent's `/metrics` after real work: one agent (simulated cluster on a manual clock, fake hub
// on real gRPC, intents in a real nats-server) applies a bundle that becomes Ready, then drifts;
// the text its metrics server serves is checked with `promtool check metrics` (which must be
// installed: Debian's `prometheus` package) and the series are read back with their values.
// Heartbeat lag and the certificate expiry gauge are pinned on their own.
import { EventEmitter } from "node:events";
import type { ClientDuplexStream } from "@grpc/grpc-js";
import type { NatsConnection } from "@nats-io/transport-node";
import { collectDefaultMetrics, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createAgentMetrics } from "@flotilla/agent";
import { registerAgentGauges } from "@flotilla/agent/testing";
import { type Clock } from "@flotilla/node";
import { createManualClock } from "@flotilla/node/testing";
import type { wire } from "@flotilla/protocol";
import {
  promtoolCheckMetrics,
  startNatsServer,
  waitFor,
  type NatsServer,
} from "@flotilla/testkit";
import { sendHeartbeats } from "../src/hub/heartbeats.js";
import { HubStream } from "../src/hub/hub-stream.js";
import { startMetricsServer } from "../src/metrics/metrics-server.js";
import { ERROR_RATIO_ANNOTATION } from "../src/simulated/error-ratio.js";
import { startAgent } from "./support/agent-harness.js";
import { FakeHub } from "./support/fake-hub.js";
import {
  bundleContent,
  connectTo,
  TestIntents,
} from "./support/test-intents.js";

/** The value of the sample `series` (labels as prom-client writes them), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Scrapes `/metrics` over HTTP, as Prometheus would, and checks it with promtool. */
async function scrape(registry: Registry): Promise<string> {
  await using server = await startMetricsServer({
    host: "127.0.0.1",
    port: 0,
    registry,
  });
  const url = `http://127.0.0.1:${String(server.port)}/metrics`;
  const text = await (await fetch(url)).text();
  // prom-client's default `nodejs_active_*_total` gauges break promtool's lint; ours may not.
  const check = promtoolCheckMetrics(text, { acceptLintOf: ["nodejs_"] });
  expect(check.problems).toEqual([]);
  expect(check.ok).toBe(true);
  return text;
}

let nats: NatsServer;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connectTo(nats.url);
});
afterAll(async () => {
  await nc.close();
  await nats.stop();
});

describe("agent /metrics", () => {
  test("shows the session state, resources not ready per bundle, apply duration and drift", async () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry }); // as agent-process.ts does
    const metrics = createAgentMetrics(registry);
    const intents = await TestIntents.open(nc, "m1");
    await using hub = await FakeHub.start({ heartbeatIntervalMs: 3_600_000 });
    await using h = await startAgent({ nc, hub, prefix: "m1", metrics });
    registerAgentGauges(registry, {
      sessionStates: () => [h.agent.session.state],
      statuses: () => h.agent.session.currentStatuses(),
    });
    await waitFor(() => h.agent.session.state === "connected");
    const connected = await scrape(registry);
    expect(
      sample(connected, 'flotilla_agent_hub_sessions{state="connected"}'),
    ).toBe(1);
    expect(
      sample(connected, 'flotilla_agent_hub_sessions{state="waiting"}'),
    ).toBe(0);
    expect(connected).not.toContain(
      "flotilla_agent_bundle_resources_not_ready{",
    );

    const digest = await intents.putContent(bundleContent("web", "r1"));
    await intents.publish({
      apiVersion: "flotilla.dev/v1",
      cluster: "c1",
      generation: 1,
      bundles: { web: { revision: "r1", digest } },
    });
    await waitFor(() =>
      hub.statusesOf("c1").some((r) => r.phase === "NotReady"),
    );
    const notReady = await scrape(registry);
    // Both objects of the bundle (a ConfigMap and a Deployment) wait to become ready.
    expect(
      sample(
        notReady,
        'flotilla_agent_bundle_resources_not_ready{bundle="web"}',
      ),
    ).toBe(2);
    expect(sample(notReady, "flotilla_agent_intents_received_total")).toBe(1);
    expect(
      sample(
        notReady,
        'flotilla_agent_apply_duration_seconds_count{outcome="Applied"}',
      ),
    ).toBe(1);

    await h.clock.advance(5_000);
    await waitFor(() => hub.statusesOf("c1").some((r) => r.phase === "Ready"));
    const ready = await scrape(registry);
    expect(
      sample(ready, 'flotilla_agent_bundle_resources_not_ready{bundle="web"}'),
    ).toBe(0);
    expect(ready).not.toContain("flotilla_agent_drift_detected_total{");

    expect(
      h.cluster.kube.drift("web", {
        kind: "Deployment",
        name: "web",
        namespace: "apps",
      }),
    ).toBe(true);
    await waitFor(() =>
      hub.statusesOf("c1").some((r) => r.phase === "Modified"),
    );
    const drifted = await scrape(registry);
    expect(
      sample(drifted, 'flotilla_agent_drift_detected_total{bundle="web"}'),
    ).toBe(1);
    expect(
      sample(
        drifted,
        'flotilla_agent_bundle_resources_not_ready{bundle="web"}',
      ),
    ).toBe(1);

    // An hour on: one heartbeat, sent when due on the manual clock.
    await h.clock.advance(3_600_000);
    await waitFor(() => h.agent.session.stats().heartbeatsSent === 1);
    const later = await scrape(registry);
    expect(sample(later, "flotilla_agent_heartbeat_lag_seconds_count")).toBe(1);
    expect(sample(later, "flotilla_agent_heartbeat_lag_seconds_sum")).toBe(0);

    // The bundle leaves the intent: its series goes.
    await intents.publish({
      apiVersion: "flotilla.dev/v1",
      cluster: "c1",
      generation: 2,
      bundles: {},
    });
    await waitFor(() => h.agent.session.currentStatuses().length === 0);
    expect(await scrape(registry)).not.toContain(
      "flotilla_agent_bundle_resources_not_ready{",
    );
    await h.agent.stop();
    expect(
      sample(
        await scrape(registry),
        'flotilla_agent_hub_sessions{state="stopped"}',
      ),
    ).toBe(1);
  });

  test("a simulated cluster shows the error ratio its applied revision sets, and refuses a bad one", async () => {
    const registry = new Registry();
    const metrics = createAgentMetrics(registry);
    const intents = await TestIntents.open(nc, "m2");
    await using hub = await FakeHub.start({ heartbeatIntervalMs: 3_600_000 });
    await using h = await startAgent({ nc, hub, prefix: "m2", metrics });
    registerAgentGauges(registry, {
      sessionStates: () => [h.agent.session.state],
      statuses: () => h.agent.session.currentStatuses(),
      simulatedErrorRatios: () =>
        [...h.cluster.kube.errorRatios()].map(([bundle, ratio]) => ({
          cluster: "c1",
          bundle,
          ratio,
        })),
    });
    await waitFor(() => h.agent.session.state === "connected");
    const series =
      'flotilla_simulated_bundle_error_ratio{cluster="c1",bundle="web"}';
    /** Publishes generation `generation` of web at `revision`, its Deployment annotated `ratio`. */
    const release = async (
      generation: number,
      revision: string,
      ratio?: unknown,
    ): Promise<void> => {
      const content = bundleContent("web", revision);
      const resources = content.resources.map((r) =>
        r.kind === "Deployment" && ratio !== undefined
          ? {
              ...r,
              metadata: {
                ...r.metadata,
                annotations: { [ERROR_RATIO_ANNOTATION]: ratio },
              },
            }
          : r,
      );
      const digest = await intents.putContent({ ...content, resources });
      await intents.publish({
        apiVersion: "flotilla.dev/v1",
        cluster: "c1",
        generation,
        bundles: { web: { revision, digest } },
      });
    };

    await release(1, "bad", "0.25");
    await waitFor(() =>
      hub
        .statusesOf("c1")
        .some((r) => r.generation === 1 && r.phase === "NotReady"),
    );
    expect(sample(await scrape(registry), series)).toBe(0.25);

    // A revision that sets no ratio: the series goes.
    await release(2, "good");
    await waitFor(() =>
      hub
        .statusesOf("c1")
        .some((r) => r.generation === 2 && r.phase === "NotReady"),
    );
    expect(await scrape(registry)).not.toContain(series);

    // A value that is not a ratio fails the apply, naming the object, the annotation and the value.
    await release(3, "typo", "lots");
    const failed = await waitFor(() =>
      hub
        .statusesOf("c1")
        .find((r) => r.generation === 3 && r.phase === "Failed"),
    );
    expect(failed.error).toContain(
      `manifests[1].metadata.annotations["${ERROR_RATIO_ANNOTATION}"]: must be a number from 0 to 1 written as a string, got "lots"`,
    );
  });

  test("shows the earliest certificate expiry, and no sample before an identity is loaded", async () => {
    const registry = new Registry();
    let expiries: number[] = [];
    registerAgentGauges(registry, {
      sessionStates: () => [],
      statuses: () => [],
      identityExpiriesMs: () => expiries,
    });
    const name = "flotilla_agent_identity_certificate_expiry_timestamp_seconds";
    const none = await scrape(registry);
    expect(none).toContain(`# TYPE ${name} gauge\n`);
    expect(sample(none, name)).toBeUndefined();
    expiries = [Date.UTC(2026, 5, 2), Date.UTC(2026, 5, 1)];
    expect(sample(await scrape(registry), name)).toBe(
      Date.UTC(2026, 5, 1) / 1000,
    );
  });

  test("a plaintext agent (no identities) has no expiry gauge at all", async () => {
    const registry = new Registry();
    registerAgentGauges(registry, {
      sessionStates: () => [],
      statuses: () => [],
    });
    expect(await scrape(registry)).not.toContain("certificate_expiry");
  });
});

/** A Connect call as HubStream uses it: writes recorded, `write()` false while `full`. */
class FakeCall extends EventEmitter {
  readonly written: wire.AgentMessage[] = [];
  full = false;
  write(message: wire.AgentMessage): boolean {
    this.written.push(message);
    return !this.full;
  }
}

describe("heartbeat lag", () => {
  const INTERVAL_MS = 10_000;

  function heartbeats(clock: Clock, call: FakeCall, signal: AbortSignal) {
    const lags: number[] = [];
    const stream = new HubStream(
      call as unknown as ClientDuplexStream<
        wire.AgentMessage,
        wire.HubMessage__Output
      >,
      () => undefined,
      () => undefined,
    );
    const done = sendHeartbeats(stream, {
      clock,
      intervalMs: INTERVAL_MS,
      signal,
      lastAppliedGeneration: () => 0,
      onSent: (_sentAtMs, lagMs) => lags.push(lagMs),
    });
    return { lags, done };
  }

  test("is how much later than due each heartbeat went out", async () => {
    const manual = createManualClock();
    // Timers that fire 250 ms late, as on a busy event loop.
    const late: Clock = {
      now: () => manual.now(),
      sleep: (ms, options) => manual.sleep(ms + 250, options),
    };
    const stop = new AbortController();
    const { lags, done } = heartbeats(late, new FakeCall(), stop.signal);
    await manual.advance(3 * (INTERVAL_MS + 250));
    expect(lags).toEqual([250, 250, 250]);
    stop.abort();
    await done;
  });

  test("a heartbeat skipped on a backlogged stream makes the next one an interval late", async () => {
    const clock = createManualClock();
    const call = new FakeCall();
    const stop = new AbortController();
    const { lags, done } = heartbeats(clock, call, stop.signal);
    call.full = true;
    await clock.advance(INTERVAL_MS); // sent, and the stream is now backlogged
    await clock.advance(INTERVAL_MS); // skipped
    call.full = false;
    call.emit("drain");
    await clock.advance(INTERVAL_MS);
    expect(lags).toEqual([0, INTERVAL_MS]);
    expect(call.written.filter((m) => m.heartbeat !== undefined)).toHaveLength(
      2,
    );
    stop.abort();
    await done;
  });
});
