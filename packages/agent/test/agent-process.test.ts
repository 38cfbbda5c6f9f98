// The built `flotilla-agent` binary hosting a simulated fleet: one process, one session per
// cluster to a fake hub, intents from a real nats-server, /metrics and /healthz, and a graceful
// stop on SIGTERM. Needs `pnpm exec tsc -b` first (it runs packages/agent/dist/main.js).
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { access, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  promtoolCheckMetrics,
  startNatsServer,
  waitFor,
  type NatsServer,
} from "@flotilla/testkit";
import { FakeHub } from "./support/fake-hub.js";
import {
  bundleContent,
  connectTo,
  TestIntents,
} from "./support/test-intents.js";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const FLEET = `# 4 edge clusters and a canary
seed: 3
defaults:
  kubernetesVersion: "1.30.5"
  timeToReady: { fixedSeconds: 0 }
clusters:
  - namePrefix: edge-
    count: 4
    labels: { ring: edge }
  - name: canary-1
    labels: { ring: canary }
`;

let nats: NatsServer;
let nc: NatsConnection;
let dir: string;

beforeAll(async () => {
  await access(MAIN).catch(() => {
    throw new Error(`${MAIN} is missing: run pnpm exec tsc -b first`);
  });
  nats = await startNatsServer();
  nc = await connectTo(nats.url);
  dir = await mkdtemp(join(tmpdir(), "flotilla-agent-process-"));
});
afterAll(async () => {
  await nc.close();
  await nats.stop();
  await rm(dir, { recursive: true, force: true });
});

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

function collectLogs(child: ChildProcess): LogLine[] {
  const lines: LogLine[] = [];
  let partial = "";
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    for (const part of parts)
      if (part !== "") lines.push(JSON.parse(part) as LogLine);
  });
  return lines;
}

test("hosts one session per simulated cluster and stops cleanly on SIGTERM", async () => {
  await using hub = await FakeHub.start();
  const intents = await TestIntents.open(nc, "proc");
  const digest = await intents.putContent(bundleContent("web", "r1"));
  await intents.publish({
    apiVersion: "flotilla.dev/v1",
    cluster: "canary-1",
    generation: 1,
    bundles: { web: { revision: "r1", digest } },
  });
  const fleet = join(dir, "fleet.yaml");
  await writeFile(fleet, FLEET);
  const stateDir = join(dir, "state");

  let stderr = "";
  const child = spawn(
    process.execPath,
    [
      MAIN,
      "--hub",
      hub.address,
      "--insecure-plaintext",
      "--nats",
      nats.url,
      "--intents-prefix",
      "proc",
      "--simulated-fleet",
      fleet,
      "--state-dir",
      stateDir,
      "--metrics-listen",
      "127.0.0.1:0",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (stderr += chunk));
  const exited = once(child, "exit");
  try {
    const logs = collectLogs(child);
    const names = ["edge-01", "edge-02", "edge-03", "edge-04", "canary-1"];
    await waitFor(
      () => names.every((n) => hub.live(n)?.bodies().includes("facts")),
      { timeoutMs: 15_000, message: `5 sessions (stderr: ${stderr})` },
    );
    expect(hub.sessions).toHaveLength(5);
    // One process, but a connection of its own for every agent.
    expect(new Set(hub.sessions.map((s) => s.peer)).size).toBe(5);
    expect(hub.live("edge-03")?.messages[1]?.facts?.labels).toEqual({
      ring: "edge",
    });
    await waitFor(() => hub.statusesOf("canary-1").at(-1)?.phase === "Ready");
    expect(hub.statusesOf("canary-1").at(-1)).toMatchObject({
      generation: 1,
      subject: { bundle: "web", revision: "r1" },
    });

    const serving = await waitFor(() =>
      logs.find((l) => l.msg === "Serving /metrics and /healthz"),
    );
    const base = `http://127.0.0.1:${String(serving["port"])}`;
    const health = await waitFor(async () => {
      const body = (await (await fetch(`${base}/healthz`)).json()) as Record<
        string,
        unknown
      >;
      return body["connected"] === 5 && body;
    });
    expect(health).toEqual({ status: "ok", agents: 5, connected: 5 });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain("flotilla_agent_sessions_connected 5");
    expect(metrics).toMatch(
      /flotilla_agent_reports_sent_total\{phase="Ready"\} [1-9]/,
    );
    expect(metrics).toContain("flotilla_agent_intents_received_total 1");
    // The process's gauges read its agents: every session is connected.
    expect(metrics).toContain(
      'flotilla_agent_hub_sessions{state="connected"} 5\n',
    );
    expect(metrics).toContain(
      'flotilla_agent_hub_sessions{state="waiting"} 0\n',
    );
    // prom-client's default `nodejs_active_*_total` gauges break promtool's lint; ours may not.
    expect(
      promtoolCheckMetrics(metrics, { acceptLintOf: ["nodejs_"] }).problems,
    ).toEqual([]);
    // Per-agent events are debug in a fleet: info stays a handful of lines.
    expect(logs.some((l) => l.msg === "Connected to the hub")).toBe(false);

    child.kill("SIGTERM");
    const [code] = await exited;
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    await waitFor(() => hub.sessions.every((s) => s.ended));
    expect(logs.at(-1)?.msg).toBe("Stopped");
    const progress = JSON.parse(
      await readFile(join(stateDir, "progress.json"), "utf8"),
    ) as {
      clusters: Record<string, { generation: number }>;
    };
    expect(progress.clusters["canary-1"]?.generation).toBe(1);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});

test("given two hub addresses, every agent finds the one that is up, and moves to the other when it stops, statuses and all", async () => {
  await using first = await FakeHub.start();
  await using second = await FakeHub.start();
  second.shutdown(); // down at start
  const intents = await TestIntents.open(nc, "failover");
  const digest = await intents.putContent(bundleContent("web", "r1"));
  await intents.publish({
    apiVersion: "flotilla.dev/v1",
    cluster: "canary-1",
    generation: 1,
    bundles: { web: { revision: "r1", digest } },
  });
  const fleet = join(dir, "fleet-failover.yaml");
  await writeFile(fleet, FLEET);

  let stderr = "";
  const child = spawn(
    process.execPath,
    [
      MAIN,
      "--hub",
      `${first.address},${second.address}`,
      "--insecure-plaintext",
      "--nats",
      nats.url,
      "--intents-prefix",
      "failover",
      "--simulated-fleet",
      fleet,
      "--metrics-listen",
      "127.0.0.1:0",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (stderr += chunk));
  const exited = once(child, "exit");
  try {
    const logs = collectLogs(child);
    const names = ["edge-01", "edge-02", "edge-03", "edge-04", "canary-1"];
    // Agents whose own order starts with the second address fail there and move on.
    await waitFor(
      () => names.every((n) => first.live(n)?.bodies().includes("facts")),
      { timeoutMs: 15_000, message: `5 sessions (stderr: ${stderr})` },
    );
    await waitFor(() => first.statusesOf("canary-1").at(-1)?.phase === "Ready");

    await second.restart();
    first.shutdown();
    await waitFor(
      () => names.every((n) => second.live(n)?.bodies().includes("facts")),
      { timeoutMs: 15_000, message: "5 sessions on the second hub" },
    );
    // The canary's current status goes out again to the hub it moved to.
    await waitFor(
      () => second.statusesOf("canary-1").at(-1)?.phase === "Ready",
    );
    expect(second.statusesOf("canary-1").at(-1)).toMatchObject({
      generation: 1,
      subject: { bundle: "web", revision: "r1" },
    });

    const serving = await waitFor(() =>
      logs.find((l) => l.msg === "Serving /metrics and /healthz"),
    );
    const base = `http://127.0.0.1:${String(serving["port"])}`;
    const metrics = await waitFor(async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      return text.includes("flotilla_agent_sessions_connected 5") && text;
    });
    expect(metrics).toContain(
      `flotilla_agent_hub_connected{address="${second.address}"} 5\n`,
    );
    expect(metrics).toContain(
      `flotilla_agent_hub_connected{address="${first.address}"} 0\n`,
    );
    const failovers = /flotilla_agent_hub_failovers_total (\d+)/.exec(metrics);
    expect(Number(failovers?.[1])).toBeGreaterThanOrEqual(5);
    expect(
      promtoolCheckMetrics(metrics, { acceptLintOf: ["nodejs_"] }).problems,
    ).toEqual([]);

    child.kill("SIGTERM");
    const [code] = await exited;
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});
