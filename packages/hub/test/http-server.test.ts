import { createServer } from "node:net";
import { promtoolCheckMetrics } from "@flotilla/testkit";
import { describe, expect, test } from "vitest";
import { createHubMetrics } from "../src/metrics/metrics.js";
import {
  startHttpServer,
  type HealthReport,
} from "../src/metrics/http-server.js";

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\["\\\\n])*"`;
// Go's ParseFloat, which Prometheus uses, takes NaN and Inf in any case (prom-client writes "Nan").
const VALUE =
  "(?:[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?|[Nn][Aa][Nn]|[-+]?[Ii][Nn][Ff])";
const SAMPLE = new RegExp(
  `^(${NAME})(?:\\{(?:${LABEL}(?:,${LABEL})*,?)?\\})? ${VALUE}(?: -?\\d+)?$`,
);
const HELP = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE = new RegExp(
  `^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`,
);

/**
 * Checks the Prometheus text format line by line (what `promtool check metrics` parses): every
 * line is a HELP, a TYPE or a sample; each family is typed once, before its samples; flotilla
 * counters end in `_total`. Returns the problems found.
 */
function formatProblems(text: string): string[] {
  const problems: string[] = [];
  const types = new Map<string, string>();
  if (!text.endsWith("\n")) problems.push("does not end with a newline");
  for (const line of text.split("\n").slice(0, -1)) {
    const help = HELP.exec(line);
    const type = TYPE.exec(line);
    const sample = SAMPLE.exec(line);
    // Empty lines are ignored by the format.
    if (help || line === "") continue;
    if (type) {
      const [, name = "", kind = ""] = type;
      if (types.has(name)) problems.push(`TYPE of ${name} given twice`);
      types.set(name, kind);
      if (
        name.startsWith("flotilla_") &&
        kind === "counter" &&
        !name.endsWith("_total")
      ) {
        problems.push(`counter ${name} does not end in _total`);
      }
      continue;
    }
    if (!sample) {
      problems.push(`not a HELP, TYPE or sample line: ${JSON.stringify(line)}`);
      continue;
    }
    const name = sample[1] ?? "";
    const family = [name, name.replace(/_(bucket|sum|count)$/, "")].find((n) =>
      types.has(n),
    );
    if (family === undefined)
      problems.push(`sample ${name} has no TYPE before it`);
  }
  return problems;
}

async function get(address: string, path: string, method = "GET") {
  const response = await fetch(`http://${address}${path}`, { method });
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    body: await response.text(),
  };
}

describe("createHubMetrics", () => {
  test("keeps each hub's metrics in its own registry", async () => {
    const a = createHubMetrics({ defaultMetrics: false });
    const b = createHubMetrics({ defaultMetrics: false });
    a.heartbeatTimedOut();
    expect(await a.registry.metrics()).toContain(
      "flotilla_hub_heartbeats_timed_out_total 1",
    );
    expect(await b.registry.metrics()).toContain(
      "flotilla_hub_heartbeats_timed_out_total 0",
    );
  });

  test("records every metric, mapping unknown label values to other", async () => {
    const metrics = createHubMetrics({ defaultMetrics: false });
    metrics.setAgentsConnected(3);
    metrics.setNatsConnected(false);
    metrics.agentSessionRefused("unauthenticated");
    metrics.statusReport("Ready", true);
    metrics.statusReport("Bogus" as "Ready", false);
    metrics.heartbeatTimedOut();
    metrics.intentPublish("written", 12);
    metrics.intentPublish("unchanged", 3);
    metrics.runTransition("member", "Succeeded");
    metrics.runTransition("run", "prod-eu-1");
    metrics.setRunsByState({ Running: 2 });
    metrics.adminCall("/flotilla.v1.AdminService/StartUpdateRun", "ok", 40);
    metrics.adminCall("StartUpdateRun", "failed_precondition", 5);
    metrics.adminCall("DropDatabase", "ok", 1);
    const text = await metrics.registry.metrics();
    for (const line of [
      "flotilla_hub_agents_connected 3",
      "flotilla_hub_nats_connected 0",
      'flotilla_hub_agent_sessions_refused_total{code="unauthenticated"} 1',
      'flotilla_hub_status_reports_total{phase="Ready",accepted="true"} 1',
      'flotilla_hub_status_reports_total{phase="other",accepted="false"} 1',
      "flotilla_hub_heartbeats_timed_out_total 1",
      "flotilla_hub_intents_published_total 1",
      'flotilla_hub_intent_publish_duration_seconds_bucket{le="0.025",result="written"} 1',
      'flotilla_hub_intent_publish_duration_seconds_count{result="unchanged"} 1',
      'flotilla_hub_run_transitions_total{scope="member",to="Succeeded"} 1',
      'flotilla_hub_run_transitions_total{scope="run",to="other"} 1',
      'flotilla_hub_runs{state="Running"} 2',
      'flotilla_hub_runs{state="Completed"} 0',
      'flotilla_hub_admin_calls_total{method="StartUpdateRun",code="ok"} 1',
      'flotilla_hub_admin_calls_total{method="StartUpdateRun",code="failed_precondition"} 1',
      'flotilla_hub_admin_calls_total{method="other",code="ok"} 1',
      'flotilla_hub_admin_call_duration_seconds_sum{method="StartUpdateRun"} 0.045',
    ]) {
      expect(text).toContain(`${line}\n`);
    }
    expect(formatProblems(text)).toEqual([]);
  });
});

describe("startHttpServer", () => {
  test("serves /metrics in the Prometheus text format, default metrics included", async () => {
    const metrics = createHubMetrics();
    metrics.adminCall("ListClusters", "ok", 2);
    await using server = await startHttpServer({
      listen: "127.0.0.1:0",
      metrics,
      health: () => ({ ok: true, checks: {} }),
    });
    const { status, type, body } = await get(server.address, "/metrics");
    expect(status).toBe(200);
    expect(type).toBe(metrics.registry.contentType);
    expect(body).toContain("# TYPE process_cpu_user_seconds_total counter\n");
    expect(body).toContain(
      'flotilla_hub_admin_calls_total{method="ListClusters",code="ok"} 1\n',
    );
    expect(formatProblems(body)).toEqual([]);
    // promtool must be installed (Debian's prometheus package): this fails rather than skips.
    // prom-client's default `nodejs_active_*_total` gauges break its lint; ours may not.
    const check = promtoolCheckMetrics(body, { acceptLintOf: ["nodejs_"] });
    expect(check.problems).toEqual([]);
    expect(check.ok).toBe(true);
  });

  test("the format check catches what promtool would reject", () => {
    expect(
      formatProblems(
        "# TYPE flotilla_hub_x counter\nflotilla_hub_x 1\nno_type 2\nbad line\n",
      ),
    ).toEqual([
      "counter flotilla_hub_x does not end in _total",
      "sample no_type has no TYPE before it",
      'not a HELP, TYPE or sample line: "bad line"',
    ]);
  });

  test("/healthz answers 200 while healthy and 503 with the checks otherwise", async () => {
    let report: HealthReport = { ok: true, checks: { nats: "connected" } };
    await using server = await startHttpServer({
      listen: "127.0.0.1:0",
      metrics: createHubMetrics({ defaultMetrics: false }),
      health: () => report,
    });
    const healthy = await get(server.address, "/healthz");
    expect(healthy).toEqual({
      status: 200,
      type: "application/json",
      body: '{"status":"ok","checks":{"nats":"connected"}}\n',
    });

    report = { ok: false, checks: { nats: "disconnected", store: "started" } };
    const failing = await get(server.address, "/healthz");
    expect(failing.status).toBe(503);
    expect(JSON.parse(failing.body)).toEqual({
      status: "failing",
      checks: { nats: "disconnected", store: "started" },
    });

    report = { ok: true, checks: { nats: "connected" } };
    expect((await get(server.address, "/healthz")).status).toBe(200);
  });

  test("/readyz answers from the readiness check, with its reasons while failing", async () => {
    let ready: HealthReport = {
      ok: false,
      checks: { hub: "starting", nats: "reconnecting" },
      reasons: [
        "the hub has not finished starting",
        "the NATS connection is down (reconnecting)",
      ],
    };
    await using server = await startHttpServer({
      listen: "127.0.0.1:0",
      metrics: createHubMetrics({ defaultMetrics: false }),
      health: () => ({ ok: true, checks: { hub: "starting" } }),
      readiness: () => ready,
    });
    const failing = await get(server.address, "/readyz");
    expect(failing.status).toBe(503);
    expect(failing.type).toBe("application/json");
    expect(JSON.parse(failing.body)).toEqual({
      status: "failing",
      checks: { hub: "starting", nats: "reconnecting" },
      reasons: [
        "the hub has not finished starting",
        "the NATS connection is down (reconnecting)",
      ],
    });
    // Liveness is its own check.
    expect((await get(server.address, "/healthz")).status).toBe(200);

    ready = { ok: true, checks: { nats: "connected" }, reasons: [] };
    expect(await get(server.address, "/readyz")).toEqual({
      status: 200,
      type: "application/json",
      body: '{"status":"ok","checks":{"nats":"connected"}}\n',
    });
  });

  test("/readyz falls back to the health check when no readiness check is given", async () => {
    await using server = await startHttpServer({
      listen: "127.0.0.1:0",
      metrics: createHubMetrics({ defaultMetrics: false }),
      health: () => ({ ok: false, checks: { grpc: "stopped" } }),
    });
    const response = await get(server.address, "/readyz");
    expect(response.status).toBe(503);
    expect(JSON.parse(response.body)).toEqual({
      status: "failing",
      checks: { grpc: "stopped" },
    });
  });

  test("a health check that throws reports 503", async () => {
    await using server = await startHttpServer({
      listen: "127.0.0.1:0",
      metrics: createHubMetrics({ defaultMetrics: false }),
      health: () => {
        throw new Error("store not started");
      },
    });
    const response = await get(server.address, "/healthz");
    expect(response.status).toBe(503);
    expect(JSON.parse(response.body)).toEqual({
      status: "failing",
      checks: { health: "store not started" },
    });
  });

  test("answers 404 for other paths and 405 for other methods", async () => {
    await using server = await startHttpServer({
      listen: "127.0.0.1:0",
      metrics: createHubMetrics({ defaultMetrics: false }),
      health: () => ({ ok: true, checks: {} }),
    });
    expect((await get(server.address, "/")).status).toBe(404);
    expect((await get(server.address, "/metrics/x")).status).toBe(404);
    expect((await get(server.address, "/readyz/x")).status).toBe(404);
    expect((await get(server.address, "/metrics", "POST")).status).toBe(405);
    const head = await get(server.address, "/metrics?name[]=x", "HEAD");
    expect(head.status).toBe(200);
    expect(head.body).toBe("");
  });

  test("close stops listening; a busy address fails with unavailable", async () => {
    const server = await startHttpServer({
      listen: "127.0.0.1:0",
      metrics: createHubMetrics({ defaultMetrics: false }),
      health: () => ({ ok: true, checks: {} }),
    });
    const { address } = server;
    await expect(
      startHttpServer({
        listen: address,
        metrics: createHubMetrics({ defaultMetrics: false }),
        health: () => ({ ok: true, checks: {} }),
      }),
    ).rejects.toMatchObject({ code: "unavailable" });
    await server.close();
    await server.close();
    await expect(get(address, "/healthz")).rejects.toThrow();
    // The port is free again.
    const probe = createServer();
    const [, port] = address.split(":");
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject).listen(Number(port), "127.0.0.1", resolve);
    });
    probe.close();
  });

  test("refuses a listen address that is not HOST:PORT", async () => {
    await expect(
      startHttpServer({
        listen: "localhost",
        metrics: createHubMetrics({ defaultMetrics: false }),
        health: () => ({ ok: true, checks: {} }),
      }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [
        { path: "listen", message: "must be HOST:PORT", value: "localhost" },
      ],
    });
  });
});
