/**
 * End-to-end harness: a real nats-server, the real hub process (`packages/hub/dist/main.js`) and
 * real agent processes (`packages/agent/dist/main.js --simulated-fleet`), driven through the real
 * CLI (`packages/cli/dist/main.js`) and an AdminService client. Everything runs from the built
 * `dist/` (the test script builds first), with short heartbeat and pass intervals so that tests
 * take seconds, and everything is stopped by `stop()`.
 *
 * With `secure: true` it is set up as docs/security.md tells an operator to: NATS in operator mode
 * (`flotilla-hub nats-setup`), the hub on TLS with its own CA, an admin token file with one token
 * per role, and agents that join with a bootstrap token; the admin client and the CLI authenticate
 * with the admin token.
 *
 * With `natsCluster` it runs on that NATS cluster instead of a server of its own: the hub and the
 * agents are given every node's URL.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
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
  type NatsCluster,
  type NatsServer,
  type TestProcess,
} from "@flotilla/testkit";
import { credentials, Metadata, type ChannelCredentials } from "@grpc/grpc-js";
import { compact } from "@flotilla/core";

/** Settings of simulated clusters, as the agent's fleet file has them. */
export type FleetFile = Readonly<Record<string, unknown>>;

export interface E2EOptions {
  /** Heartbeat interval of the hub (agents follow it); default 500 ms. */
  readonly heartbeatMs?: number;
  /** NATS authorization, TLS, admin tokens and agent registration (see the module doc). */
  readonly secure?: boolean;
  /** The hub's `--log-level`; default `warn`. */
  readonly hubLogLevel?: string;
  /** The hub's `--http-listen` (metrics, health); default "off". */
  readonly httpListen?: string;
  /** More flags for the hub (not those the harness sets). */
  readonly hubArgs?: readonly string[];
  /** Run on this NATS cluster (the caller stops it) instead of a nats-server of its own. */
  readonly natsCluster?: NatsCluster;
  /**
   * Hub replicas sharing the NATS (docs/high-availability.md), named `hub-0`, `hub-1`…; agents
   * are given every replica's address. Default 1.
   */
  readonly replicas?: number;
  /** The replicas' `--lease-ttl`; default the hub's. */
  readonly leaseTtl?: string;
}

/** Admin roles of the secure mode's token file. */
export type E2ERole = "viewer" | "operator" | "admin";

/** What the secure mode set up (undefined in plaintext mode). */
export interface E2ESecurity {
  /** The hub's CA certificate (written by `--write-ca`). */
  readonly caFile: string;
  /** A file holding the bearer token of each role. */
  readonly tokenFiles: Readonly<Record<E2ERole, string>>;
  /** The NATS server's URL and the directory `flotilla-hub nats-setup` wrote. */
  readonly natsSetupDir: string;
  /** An AdminService client authenticated with `role`'s token. */
  client(role: E2ERole): wire.AdminServiceClient;
  /** A file holding a fresh bootstrap token for `maxUses` agents (from the admin API). */
  bootstrapTokenFile(maxUses: number, cluster?: string): Promise<string>;
  /** Runs `flotilla ARGS` with `role`'s token. */
  cli(role: E2ERole, ...args: string[]): Promise<CliResult>;
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface E2E {
  /** The harness's own nats-server; there is none with `natsCluster` (reading it throws). */
  readonly nats: NatsServer;
  /** The NATS URLs the hub and the agents are given. */
  readonly natsUrls: readonly string[];
  readonly hubAddress: string;
  /** Every replica's address (one without `replicas`). */
  readonly hubAddresses: readonly string[];
  /** Replica `index`'s process (default the first). */
  hub(index?: number): TestProcess;
  /** The client of the replica admin calls and the CLI go to (see {@link useHub}). */
  readonly admin: wire.AdminServiceClient;
  /** Sends admin calls and the CLI to replica `index` from now on (plaintext mode only). */
  useHub(index: number): void;
  /**
   * Starts one agents process hosting the fleet file's clusters; `name` keys it for later.
   * `extraArgs` are more agent flags (e.g. `--windows-reload-interval`, or `--metrics-listen`
   * for a `/metrics` to scrape; none by default).
   */
  startAgents(
    name: string,
    fleet: FleetFile,
    extraArgs?: readonly string[],
  ): Promise<TestProcess>;
  agents(name: string): TestProcess;
  /** Starts replica `index` (default the first) again. */
  startHub(index?: number): Promise<TestProcess>;
  /** Runs `flotilla ARGS` against the hub. */
  cli(...args: string[]): Promise<CliResult>;
  /** `flotilla ARGS`, which must exit 0 (else it throws with the exit code and stderr): its stdout. */
  ok(...args: string[]): Promise<string>;
  /** The run as the hub reports it. */
  run(name: string): Promise<RunView>;
  /** Waits until `count` agents are connected. */
  connected(count: number, timeoutMs?: number): Promise<void>;
  /** Set in secure mode. */
  readonly security: E2ESecurity | undefined;
  /** The agents processes' state directory of `name`. */
  stateDir(name: string): string;
  stop(): Promise<void>;
}

const ROLES: readonly E2ERole[] = ["viewer", "operator", "admin"];

/** Sets up NATS authorization and the admin token file; returns what the hub needs. */
async function prepareSecurity(work: string): Promise<{
  natsConfig: string;
  natsSetupDir: string;
  tokens: Record<E2ERole, string>;
  tokenFiles: Record<E2ERole, string>;
  adminTokensFile: string;
}> {
  const natsSetupDir = join(work, "nats-setup");
  const setup = await runProcess({
    name: "nats-setup",
    args: [
      "packages/hub/dist/main.js",
      "nats-setup",
      "--out",
      natsSetupDir,
      "--resolver-dir",
      join(work, "nats-jwt"),
    ],
  });
  if (setup.code !== 0)
    throw new Error(`flotilla-hub nats-setup failed:\n${setup.stderr}`);
  const tokens = {} as Record<E2ERole, string>;
  const tokenFiles = {} as Record<E2ERole, string>;
  const entries: string[] = [];
  for (const role of ROLES) {
    const token = randomBytes(24).toString("base64url");
    tokens[role] = token;
    tokenFiles[role] = join(work, `${role}.token`);
    await writeFile(tokenFiles[role], `${token}\n`, { mode: 0o600 });
    const digest = createHash("sha256").update(token).digest("hex");
    entries.push(
      `- { name: e2e-${role}, role: ${role}, tokenSha256: "${digest}" }`,
    );
  }
  const adminTokensFile = join(work, "admin-tokens.yaml");
  await writeFile(adminTokensFile, `${entries.join("\n")}\n`, { mode: 0o600 });
  return {
    natsConfig: await readFile(join(natsSetupDir, "nats-auth.conf"), "utf8"),
    natsSetupDir,
    tokens,
    tokenFiles,
    adminTokensFile,
  };
}

/** TLS to the hub's CA plus the bearer token on every call. */
function tokenCredentials(ca: Buffer, token: string): ChannelCredentials {
  return credentials.combineChannelCredentials(
    credentials.createSsl(ca),
    credentials.createFromMetadataGenerator((_params, callback) => {
      const metadata = new Metadata();
      metadata.set("authorization", `Bearer ${token}`);
      callback(null, metadata);
    }),
  );
}

export async function startE2E(options: E2EOptions = {}): Promise<E2E> {
  const work = await mkdtemp(join(tmpdir(), "flotilla-e2e-"));
  if (options.secure === true && options.natsCluster !== undefined) {
    throw new Error(
      "the e2e harness sets up NATS security on its own server only",
    );
  }
  const secure =
    options.secure === true ? await prepareSecurity(work) : undefined;
  const nats =
    options.natsCluster === undefined
      ? await startNatsServer(
          secure === undefined ? {} : { config: secure.natsConfig },
        )
      : undefined;
  const natsUrls = options.natsCluster?.urls ?? [nats?.url ?? ""];
  const replicas = options.replicas ?? 1;
  const hubAddresses: string[] = [];
  for (let i = 0; i < replicas; i++) {
    hubAddresses.push(`127.0.0.1:${String(await freePort())}`);
  }
  const hubAddress = hubAddresses[0] ?? "";
  let current = 0;
  const heartbeat = options.heartbeatMs ?? 500;
  const caFile = join(work, "hub-ca.pem");
  const hubs: (TestProcess | undefined)[] = [];
  const agents = new Map<string, TestProcess>();
  const clients: wire.AdminServiceClient[] = [];
  const securityArgs =
    secure === undefined
      ? ["--insecure-plaintext"]
      : [
          "--write-ca",
          caFile,
          "--admin-tokens",
          secure.adminTokensFile,
          "--nats-auth-dir",
          secure.natsSetupDir,
        ];

  const startHub = async (index = 0): Promise<TestProcess> => {
    const proc = startProcess({
      name: replicas === 1 ? "hub" : `hub-${String(index)}`,
      args: [
        "packages/hub/dist/main.js",
        "--listen",
        hubAddresses[index] ?? hubAddress,
        ...(replicas === 1
          ? []
          : [
              "--replica-id",
              `hub-${String(index)}`,
              ...(options.leaseTtl === undefined
                ? []
                : ["--lease-ttl", options.leaseTtl]),
            ]),
        "--http-listen",
        options.httpListen ?? "off",
        "--nats",
        natsUrls.join(","),
        ...securityArgs,
        "--heartbeat-interval",
        `${String(heartbeat)}ms`,
        "--pass-interval",
        "250ms",
        "--log-level",
        options.hubLogLevel ?? "warn",
        ...(options.hubArgs ?? []),
      ],
    });
    hubs[index] = proc;
    await proc.waitForLine(/serving gRPC/);
    return proc;
  };

  for (let i = 0; i < replicas; i++) await startHub(i);
  const ca = secure === undefined ? undefined : await readFile(caFile);
  const clientFor = (role: E2ERole): wire.AdminServiceClient => {
    if (secure === undefined || ca === undefined)
      return createAdminServiceClient(hubAddress, credentials.createInsecure());
    const client = createAdminServiceClient(
      hubAddress,
      tokenCredentials(ca, secure.tokens[role]),
    );
    clients.push(client);
    return client;
  };
  let admin = clientFor("admin");
  const runCli = (env: Record<string, string>, args: string[]) =>
    runProcess({
      name: "flotilla",
      args: ["packages/cli/dist/main.js", ...args],
      env: { FLOTILLA_HUB: hubAddresses[current] ?? hubAddress, ...env },
    });
  let bootstrapTokens = 0;
  const security: E2ESecurity | undefined =
    secure === undefined
      ? undefined
      : {
          caFile,
          tokenFiles: secure.tokenFiles,
          natsSetupDir: secure.natsSetupDir,
          client: clientFor,
          async bootstrapTokenFile(maxUses, cluster) {
            const { secret } = await callUnary(admin, "createBootstrapToken", {
              ttlSeconds: 600,
              maxUses,
              ...compact({ clusterName: cluster }),
              reason: "e2e",
            });
            bootstrapTokens += 1;
            const file = join(
              work,
              `bootstrap-${String(bootstrapTokens)}.token`,
            );
            await writeFile(file, `${secret}\n`, { mode: 0o600 });
            return file;
          },
          cli: (role, ...args) =>
            runCli(
              {
                FLOTILLA_TLS_CA: caFile,
                FLOTILLA_TOKEN_FILE: secure.tokenFiles[role],
              },
              args,
            ),
        };

  const e2e: E2E = {
    get nats() {
      if (nats === undefined)
        throw new Error(
          "this e2e harness runs on a NATS cluster: use natsUrls",
        );
      return nats;
    },
    natsUrls,
    hubAddress,
    hubAddresses,
    get admin() {
      return admin;
    },
    useHub(index) {
      if (secure !== undefined) throw new Error("useHub: plaintext only");
      admin.close();
      current = index;
      admin = createAdminServiceClient(
        hubAddresses[index] ?? hubAddress,
        credentials.createInsecure(),
      );
    },
    hub: (index = 0) => {
      const proc = hubs[index];
      if (proc === undefined) throw new Error(`no hub ${String(index)}`);
      return proc;
    },
    startHub,
    async startAgents(name, fleet, extraArgs = []) {
      const file = join(work, `${name}.json`);
      await writeFile(file, JSON.stringify(fleet));
      const proc = startProcess({
        name: `agents ${name}`,
        args: [
          "packages/agent/dist/main.js",
          "--simulated-fleet",
          file,
          "--hub",
          hubAddresses.join(","),
          ...(security === undefined
            ? ["--insecure-plaintext"]
            : [
                "--tls-ca",
                caFile,
                "--bootstrap-token-file",
                await security.bootstrapTokenFile(clusterCount(fleet)),
              ]),
          "--nats",
          natsUrls.join(","),
          "--state-dir",
          join(work, `state-${name}`),
          ...(extraArgs.includes("--metrics-listen")
            ? []
            : ["--metrics-listen", "off"]),
          "--log-level",
          "warn",
          ...extraArgs,
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
      if (security !== undefined) return security.cli("admin", ...args);
      return runCli(
        { FLOTILLA_INSECURE_PLAINTEXT: "1", FLOTILLA_ACTOR: "e2e" },
        args,
      );
    },
    async ok(...args) {
      const { code, stdout, stderr } = await this.cli(...args);
      if (code !== 0)
        throw new Error(
          `flotilla ${args.join(" ")} exited ${String(code)}: ${stderr}${stdout}`,
        );
      return stdout;
    },
    security,
    stateDir: (name) => join(work, `state-${name}`),
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
      for (const client of clients) client.close();
      await Promise.all([...agents.values()].map((a) => a.stop()));
      for (const h of hubs) await h?.stop();
      await nats?.stop();
      await rm(work, { recursive: true, force: true });
    },
  };
  return e2e;
}

/** How many clusters a fleet file hosts (its entries' `count`, 1 for a named cluster). */
function clusterCount(fleet: FleetFile): number {
  const entries = (fleet.clusters ?? []) as readonly { count?: number }[];
  return entries.reduce((sum, entry) => sum + (entry.count ?? 1), 0);
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
