/**
 * End-to-end harness: a real nats-server, the real hub process (`packages/hub/dist/main.js`) and
 * real agent processes (`packages/agent/dist/main.js --simulated-fleet`), driven through the real
 * CLI (`packages/cli/dist/main.js`) and an AdminService client. Everything runs from the built
 * `dist/` (the test script builds first), with short heartbeat and pass intervals so that tests
 * take seconds, and everything is stopped by `stop()`.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  callUnary,
  createAdminServiceClient,
  runFromWire,
  type RunView,
  type wire,
} from "@flotilla/protocol";
import {
  freePort,
  runProcess,
  startNatsServer,
  startProcess,
  waitFor,
  type NatsServer,
  type TestProcess,
} from "@flotilla/testkit";
import { credentials } from "@grpc/grpc-js";

/** Settings of simulated clusters, as the agent's fleet file has them. */
export type FleetFile = Readonly<Record<string, unknown>>;

export interface E2EOptions {
  /** Heartbeat interval of the hub (agents follow it); default 500 ms. */
  readonly heartbeatMs?: number;
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface E2E {
  readonly nats: NatsServer;
  readonly hubAddress: string;
  hub(): TestProcess;
  readonly admin: wire.AdminServiceClient;
  /** Starts one agents process hosting the fleet file's clusters; `name` keys it for later. */
  startAgents(name: string, fleet: FleetFile): Promise<TestProcess>;
  agents(name: string): TestProcess;
  startHub(): Promise<TestProcess>;
  /** Runs `flotilla ARGS` against the hub. */
  cli(...args: string[]): Promise<CliResult>;
  /** The run as the hub reports it. */
  run(name: string): Promise<RunView>;
  /** Waits until `count` agents are connected. */
  connected(count: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startE2E(options: E2EOptions = {}): Promise<E2E> {
  const work = await mkdtemp(join(tmpdir(), "flotilla-e2e-"));
  const nats = await startNatsServer();
  const hubAddress = `127.0.0.1:${String(await freePort())}`;
  const heartbeat = options.heartbeatMs ?? 500;
  let hub: TestProcess | undefined;
  const agents = new Map<string, TestProcess>();
  const admin = createAdminServiceClient(
    hubAddress,
    credentials.createInsecure(),
  );

  const startHub = async (): Promise<TestProcess> => {
    const proc = startProcess({
      name: "hub",
      args: [
        "packages/hub/dist/main.js",
        "--listen",
        hubAddress,
        "--http-listen",
        "off",
        "--nats",
        nats.url,
        "--insecure-plaintext",
        "--heartbeat-interval",
        `${String(heartbeat)}ms`,
        "--pass-interval",
        "250ms",
        "--log-level",
        "warn",
      ],
    });
    hub = proc;
    await proc.waitForLine(/serving gRPC/);
    return proc;
  };

  await startHub();

  const e2e: E2E = {
    nats,
    hubAddress,
    admin,
    hub: () => {
      if (hub === undefined) throw new Error("no hub");
      return hub;
    },
    startHub,
    async startAgents(name, fleet) {
      const file = join(work, `${name}.json`);
      await writeFile(file, JSON.stringify(fleet));
      const proc = startProcess({
        name: `agents ${name}`,
        args: [
          "packages/agent/dist/main.js",
          "--simulated-fleet",
          file,
          "--hub",
          hubAddress,
          "--insecure-plaintext",
          "--nats",
          nats.url,
          "--state-dir",
          join(work, `state-${name}`),
          "--metrics-listen",
          "off",
          "--log-level",
          "warn",
        ],
      });
      agents.set(name, proc);
      return proc;
    },
    agents(name) {
      const proc = agents.get(name);
      if (proc === undefined) throw new Error(`no agents ${name}`);
      return proc;
    },
    async cli(...args) {
      return runProcess({
        name: "flotilla",
        args: ["packages/cli/dist/main.js", ...args],
        env: {
          FLOTILLA_HUB: hubAddress,
          FLOTILLA_INSECURE_PLAINTEXT: "1",
          FLOTILLA_ACTOR: "e2e",
        },
      });
    },
    async run(name) {
      const { run } = await callUnary(admin, "getUpdateRun", { name });
      if (run === null) throw new Error(`no run ${name} in the answer`);
      const view = runFromWire(run);
      if (!view.ok) throw new Error(JSON.stringify(view.problems));
      return view.value;
    },
    async connected(count, timeoutMs = 30_000) {
      await waitFor(
        async () => {
          const { clusters } = await callUnary(admin, "listClusters", {
            pageSize: 1000,
          });
          return (
            clusters.filter(
              (c) => c.connection === "CONNECTION_STATE_CONNECTED",
            ).length === count
          );
        },
        {
          timeoutMs,
          intervalMs: 200,
          message: `${String(count)} agents to connect`,
        },
      );
    },
    async stop() {
      admin.close();
      await Promise.all([...agents.values()].map((a) => a.stop()));
      await hub?.stop();
      await nats.stop();
      await rm(work, { recursive: true, force: true });
    },
  };
  return e2e;
}

/** `count` simulated clusters named PREFIX01…, with these labels and settings. */
export function clusters(
  namePrefix: string,
  count: number,
  labels: Readonly<Record<string, string>>,
  extra: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  return { namePrefix, count, labels, ...extra };
}

/** A fleet file: fast simulated clusters on Kubernetes 1.29.9. */
export function fleetFile(
  entries: readonly Record<string, unknown>[],
): FleetFile {
  return {
    seed: 11,
    defaults: {
      kubernetesVersion: "1.29.9",
      nodePools: [
        {
          name: "system",
          imageFamily: "ubuntu-22.04",
          imageVersion: "2026.11.20",
        },
      ],
      timeToReady: { uniform: { minSeconds: 0.2, maxSeconds: 0.8 } },
      applyDuration: { fixedSeconds: 0.1 },
      upgradeDuration: { uniform: { minSeconds: 0.5, maxSeconds: 1.5 } },
    },
    clusters: entries,
  };
}

/** Member intervals [start, finish] of a finished run, by stage. */
export function memberIntervals(run: RunView): {
  stage: string;
  group: string;
  name: string;
  start: number;
  end: number;
  state: string;
}[] {
  return run.stages.flatMap((s) =>
    s.groups.flatMap((g) =>
      g.members.map((m) => ({
        stage: s.name,
        group: g.name,
        name: m.name,
        start: m.startedAtMs ?? Number.NaN,
        end: m.finishedAtMs ?? Number.NaN,
        state: m.state,
      })),
    ),
  );
}

/** The largest number of intervals open at once (start inclusive, end exclusive). */
export function maxOverlap(
  intervals: readonly { start: number; end: number }[],
): number {
  const edges = intervals.flatMap((i) => [
    { at: i.start, d: 1 },
    { at: i.end, d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let open = 0;
  let max = 0;
  for (const e of edges) {
    open += e.d;
    max = Math.max(max, open);
  }
  return max;
}
