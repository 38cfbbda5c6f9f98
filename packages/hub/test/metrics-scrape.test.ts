/**
 * The hub's `/metrics` after real traffic: a hub over gRPC (in-memory adapters) built with the
 * same observer and gauges as main.ts, driven by scripted agents, AdminService calls and agent
 * registrations; the text served is checked with `promtool check metrics` (which must be
 * installed: Debian's `prometheus` package) and the new series are read back with their values.
 */
import {
  callUnary,
  createAgentServiceClient,
  type wire,
} from "@flotilla/protocol";
import { promtoolCheckMetrics, waitFor } from "@flotilla/testkit";
import { credentials, type ServiceError } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { startHttpServer } from "../src/metrics/http-server.js";
import { createHubMetrics, type HubMetrics } from "../src/metrics/metrics.js";
import {
  DEFAULT_FINISHED_RUN_RETENTION_MS,
  hubObserverOf,
  startHubGauges,
} from "../src/metrics/metrics-observer.js";
import { createAdminAuth } from "../src/security/admin-auth.js";
import { startTestHub, type TestHubOptions } from "./hub-harness.js";
import { connectScriptedAgent, type ScriptedAgent } from "./scripted-agent.js";
import { newKeyAndCsr } from "./security-keys.js";
import { startSecureTestHub } from "./security-harness.js";

const STRATEGY = JSON.stringify({
  stages: [
    {
      name: "prod",
      memberSelector: { byLabel: "ring=prod" },
      maxConcurrency: 1,
    },
  ],
});

/** The value of the sample `name{labels}` (labels as prom-client writes them), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Scrapes `/metrics` over HTTP, as Prometheus would, and checks it with promtool. */
async function scrape(metrics: HubMetrics): Promise<string> {
  await using http = await startHttpServer({
    listen: "127.0.0.1:0",
    metrics,
    health: () => ({ ok: true, checks: {} }),
  });
  const text = await (await fetch(`http://${http.address}/metrics`)).text();
  // prom-client's default `nodejs_active_*_total` gauges break promtool's lint; ours may not.
  const check = promtoolCheckMetrics(text, { acceptLintOf: ["nodejs_"] });
  expect(check.problems).toEqual([]);
  expect(check.ok).toBe(true);
  return text;
}

async function testHub(options: TestHubOptions = {}) {
  const metrics = createHubMetrics();
  const t = await startTestHub({
    observer: hubObserverOf(metrics),
    ...options,
  });
  const gauges = startHubGauges(t.hub, metrics, {
    intervalMs: 60_000,
    now: () => t.clock.now(),
  });
  const agents: ScriptedAgent[] = [];
  return {
    t,
    metrics,
    gauges,
    agents,
    async [Symbol.asyncDispose]() {
      gauges.stop();
      for (const a of agents) a.close();
      await t.stop();
    },
  };
}

describe("hub /metrics", () => {
  it("counts a run's members by state, reports and intents, and drops the run's series once it is long finished", async () => {
    await using h = await testHub();
    const { t } = h;
    for (const name of ["p-1", "p-2"]) {
      const agent = connectScriptedAgent(t.address);
      h.agents.push(agent);
      agent.hello(name);
      agent.send({
        facts: { labels: { ring: "prod" }, kubernetesVersion: "1.29.4" },
      });
      await agent.next("welcome");
      await waitFor(
        () => t.hub.registry.cluster(name)?.labels["ring"] === "prod",
      );
    }
    await callUnary(t.admin, "createUpdateStrategy", {
      name: "one-by-one",
      strategyJson: STRATEGY,
      reason: "",
    });
    await callUnary(t.admin, "createUpdateRun", {
      name: "k8s-130",
      strategyName: "one-by-one",
      payload: {
        upgrade: { type: "UPGRADE_TYPE_FULL", kubernetesVersion: "1.30.0" },
      },
      reason: "",
    });
    await callUnary(t.admin, "startUpdateRun", { name: "k8s-130", reason: "" });

    const members = (state: string) =>
      `flotilla_hub_run_members{run="k8s-130",state="${state}"}`;
    let sequence = 0;
    for (let succeeded = 0; succeeded < 2; succeeded++) {
      const running = await waitFor(() =>
        t.hub.runs
          .get("k8s-130")
          .run.stages[0]?.groups.flatMap((g) => g.members)
          .find((m) => m.state === "Running"),
      );
      h.gauges.refresh();
      const during = await scrape(h.metrics);
      expect(sample(during, members("Running"))).toBe(1);
      expect(sample(during, members("Succeeded"))).toBe(succeeded);
      expect(sample(during, members("Failed"))).toBe(0);
      expect(sample(during, 'flotilla_hub_runs{state="Running"}')).toBe(1);
      expect(sample(during, "flotilla_hub_agents_connected")).toBe(2);

      const agent = h.agents[["p-1", "p-2"].indexOf(running.name)];
      if (agent === undefined) throw new Error(`no agent ${running.name}`);
      const { intent } = await t.hub.intents.current(running.name);
      agent.send({
        status: {
          sequence: ++sequence,
          generation: intent.generation,
          upgradeId: "k8s-130",
          phase: "STATUS_PHASE_READY",
          observedAtMs: t.clock.now(),
        },
      });
      await agent.next("ack", (a) => a.sequence === sequence);
      await waitFor(
        () =>
          t.hub.runs
            .get("k8s-130")
            .run.stages[0]?.groups.flatMap((g) => g.members)
            .filter((m) => m.state === "Succeeded").length ===
          succeeded + 1,
      );
    }
    await waitFor(() => t.hub.runs.get("k8s-130").run.state === "Completed");

    h.gauges.refresh();
    const finished = await scrape(h.metrics);
    expect(sample(finished, members("Succeeded"))).toBe(2);
    expect(sample(finished, members("Running"))).toBe(0);
    expect(sample(finished, 'flotilla_hub_runs{state="Completed"}')).toBe(1);
    expect(
      sample(
        finished,
        'flotilla_hub_status_reports_total{phase="Ready",accepted="true"}',
      ),
    ).toBe(2);
    // One upgrade intent per member, at least (a removal after the run may add more).
    expect(
      sample(finished, "flotilla_hub_intents_published_total"),
    ).toBeGreaterThanOrEqual(2);
    expect(
      sample(
        finished,
        'flotilla_hub_admin_calls_total{method="StartUpdateRun",code="ok"}',
      ),
    ).toBe(1);

    // A finished run keeps its series for the retention, then loses them (it is still stored).
    t.clock.advance(DEFAULT_FINISHED_RUN_RETENTION_MS - 1);
    h.gauges.refresh();
    expect(sample(await scrape(h.metrics), members("Succeeded"))).toBe(2);
    t.clock.advance(1);
    h.gauges.refresh();
    const later = await scrape(h.metrics);
    expect(later).not.toContain('run="k8s-130"');
    expect(t.hub.runs.get("k8s-130").run.state).toBe("Completed");
    expect(sample(later, 'flotilla_hub_runs{state="Completed"}')).toBe(1);
  });

  it("counts admin calls refused by authentication, streaming ones included, and refused registrations", async () => {
    // No token file, no certificates: every admin caller is unauthenticated.
    await using h = await testHub({
      adminAuth: (deps, hooks) => createAdminAuth({ ...deps, ...hooks }),
    });
    const { t } = h;
    await expect(callUnary(t.admin, "listClusters", {})).rejects.toMatchObject({
      code: "unauthenticated",
    });
    await expect(callUnary(t.admin, "listClusters", {})).rejects.toMatchObject({
      code: "unauthenticated",
    });
    const stream = t.admin.watchAuditEvents({});
    const code = await new Promise<number>((resolve) => {
      stream.on("error", (error: ServiceError) => {
        resolve(error.code);
      });
      stream.on("data", () => undefined);
    });
    expect(code).toBe(16); // UNAUTHENTICATED
    // A plaintext hub registers nobody.
    const agentClient = createAgentServiceClient(
      t.address,
      credentials.createInsecure(),
    );
    await expect(
      callUnary(agentClient, "register", {
        bootstrapToken: "x".repeat(32),
        clusterName: "c-1",
        csrPem: "",
        agentVersion: "test",
      }),
    ).rejects.toMatchObject({ code: "failed_precondition" });
    agentClient.close();

    const text = await scrape(h.metrics);
    expect(
      sample(
        text,
        'flotilla_hub_admin_calls_denied_total{method="ListClusters",code="unauthenticated"}',
      ),
    ).toBe(2);
    expect(
      sample(
        text,
        'flotilla_hub_admin_calls_denied_total{method="WatchAuditEvents",code="unauthenticated"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'flotilla_hub_registrations_total{method="Register",code="failed_precondition"}',
      ),
    ).toBe(1);
  });

  it("counts registrations by outcome on a hub with TLS", async () => {
    const metrics = createHubMetrics({ defaultMetrics: false });
    await using t = await startSecureTestHub({
      observer: hubObserverOf(metrics),
    });
    const token = await callUnary(t.admin, "createBootstrapToken", {
      ttlSeconds: 3_600,
    });
    const register = async (
      secret: string,
    ): Promise<wire.RegisterResponse__Output> => {
      const key = await newKeyAndCsr();
      return callUnary(t.agentClient(), "register", {
        bootstrapToken: secret,
        clusterName: "c-1",
        csrPem: key.csrPem,
        agentVersion: "test",
      });
    };
    const registered = await register(token.secret);
    expect(registered.identity?.clientCertificatePem).toMatch(
      /BEGIN CERTIFICATE/,
    );
    await expect(
      register(`${token.secret.slice(0, -4)}AAAA`),
    ).rejects.toMatchObject({
      code: "unauthenticated",
    });
    // Renewal without a client certificate.
    await expect(
      callUnary(t.agentClient(), "renewIdentity", { csrPem: "" }),
    ).rejects.toMatchObject({ code: "unauthenticated" });

    const text = await scrape(metrics);
    expect(
      sample(
        text,
        'flotilla_hub_registrations_total{method="Register",code="ok"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'flotilla_hub_registrations_total{method="Register",code="unauthenticated"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'flotilla_hub_registrations_total{method="RenewIdentity",code="unauthenticated"}',
      ),
    ).toBe(1);
  });
});
