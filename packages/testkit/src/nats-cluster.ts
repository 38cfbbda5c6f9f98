import { FlotillaError, compact } from "@flotilla/core";
import { freePort } from "./free-port.js";
import {
  startNatsServer,
  type NatsServer,
  type StartNatsServerOptions,
} from "./nats-server.js";
import { waitFor } from "./wait-for.js";

/** Options of {@link startNatsCluster}. */
export interface StartNatsClusterOptions {
  /** How many servers; default 3 (the smallest cluster that keeps a quorum with one down). */
  nodes?: number;
  /** The cluster's name (`cluster { name }`); default `flotilla-test`. */
  name?: string;
  /** Aborts a start that is still waiting for the cluster to become ready. */
  signal?: AbortSignal;
  /** The executable; default `nats-server` from PATH, else from /usr/sbin. */
  binary?: string;
  /**
   * How long one server's (re)start may take until its `/healthz` answers 200, and the whole
   * cluster until it has a JetStream meta leader; default 30000 ms.
   */
  startTimeoutMs?: number;
  /** How long a SIGTERM may take before SIGKILL; default 5000 ms. */
  stopTimeoutMs?: number;
  /**
   * More server configuration for every node (nats-server's config file syntax), after the
   * testkit's `server_name` and `cluster` block, which it must not repeat.
   */
  config?: string;
}

/** One server of a {@link NatsCluster}. */
export interface NatsClusterNode {
  /** Its `server_name`: `n1`, `n2`, ... */
  readonly name: string;
  /** Client URL, `nats://127.0.0.1:<port>`; stable across restarts. */
  readonly url: string;
  readonly port: number;
  /** Monitoring URL of the running process (a new port on every restart). */
  readonly monitorUrl: string;
  /** Its own JetStream store directory; kept across restarts. */
  readonly storeDir: string;
  /** Process id of the running server, `undefined` while halted or killed. */
  readonly pid: number | undefined;
  /** Stops the process (SIGTERM, then SIGKILL), keeping its port and data. */
  halt(): Promise<void>;
  /** Kills the process at once (SIGKILL, a crash), keeping its port and data. */
  kill(): Promise<void>;
  /**
   * Halts if running, then starts again on the same ports with the same data; resolves once the
   * server reports JetStream ready (which needs a quorum of the cluster running).
   */
  restart(options?: { signal?: AbortSignal }): Promise<void>;
  /** The last lines the server logged. */
  logs(): string;
}

/** What {@link NatsCluster.ready} waits with. */
export interface NatsClusterWaitOptions {
  /** Default: the cluster's start timeout. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * A cluster of real nats-server processes on 127.0.0.1, JetStream on each, joined by routes; every
 * server in a temporary directory of its own.
 */
export interface NatsCluster extends AsyncDisposable {
  readonly name: string;
  /** Every node's client URL, in node order: what a client is given to use any of them. */
  readonly urls: readonly string[];
  readonly nodes: readonly NatsClusterNode[];
  /**
   * Resolves once the running nodes agree on a JetStream meta leader among them and the leader
   * sees every other running node as current. Rejects with `deadline_exceeded` otherwise.
   */
  ready(options?: NatsClusterWaitOptions): Promise<void>;
  /** The node that is the JetStream meta leader, once the running nodes agree on one. */
  metaLeader(options?: NatsClusterWaitOptions): Promise<NatsClusterNode>;
  /** The running node a client connected with connection name `clientName` is on, if any. */
  nodeServing(clientName: string): Promise<NatsClusterNode | undefined>;
  /** Stops every node and removes their directories. Idempotent. */
  stop(): Promise<void>;
}

const MAX_NODES = 9;

/**
 * Starts `nodes` nats-servers (default 3) with JetStream, each with its own `server_name`, store
 * directory and client and route ports on loopback, every node routed to every other, and
 * resolves once they have elected a JetStream meta leader and all are current: streams and KV
 * buckets with up to `nodes` replicas can be created at once. Use with `await using`.
 */
export async function startNatsCluster(
  options: StartNatsClusterOptions = {},
): Promise<NatsCluster> {
  const count = options.nodes ?? 3;
  if (!Number.isInteger(count) || count < 2 || count > MAX_NODES) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot start a NATS cluster: nodes must be a whole number from 2 to ${String(MAX_NODES)}, not ${String(count)}`,
    );
  }
  const name = options.name ?? "flotilla-test";
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  // Routes name every node's cluster port, so these are chosen before any node starts.
  const routePorts: number[] = [];
  for (let i = 0; i < count; i++) routePorts.push(await freePort());
  const routes = routePorts.map((p) => `nats-route://127.0.0.1:${String(p)}`);

  const started = await Promise.allSettled(
    routePorts.map((routePort, i) =>
      startNatsServer({
        ...serverOptions(options, startTimeoutMs),
        config: nodeConfig({
          serverName: nodeName(i),
          clusterName: name,
          routePort,
          routes,
          extra: options.config,
        }),
      }),
    ),
  );
  const servers = started.flatMap((s) =>
    s.status === "fulfilled" ? [s.value] : [],
  );
  const failed = started.find((s) => s.status === "rejected");
  if (failed !== undefined) {
    await Promise.all(servers.map((s) => s.stop()));
    throw failed.reason;
  }
  const cluster = new NatsClusterProcesses(
    name,
    servers.map((server, i) => new ClusterNode(nodeName(i), server)),
    startTimeoutMs,
  );
  try {
    await cluster.ready(compact({ signal: options.signal }));
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

function nodeName(index: number): string {
  return `n${String(index + 1)}`;
}

function serverOptions(
  options: StartNatsClusterOptions,
  startTimeoutMs: number,
): StartNatsServerOptions {
  const { signal, binary, stopTimeoutMs } = options;
  return { startTimeoutMs, ...compact({ signal, binary, stopTimeoutMs }) };
}

function nodeConfig(node: {
  serverName: string;
  clusterName: string;
  routePort: number;
  routes: readonly string[];
  extra: string | undefined;
}): string {
  return [
    `server_name: ${node.serverName}`,
    "cluster {",
    `  name: ${node.clusterName}`,
    `  listen: 127.0.0.1:${String(node.routePort)}`,
    `  routes: [${node.routes.join(", ")}]`,
    "}",
    node.extra ?? "",
  ].join("\n");
}

class ClusterNode implements NatsClusterNode {
  constructor(
    readonly name: string,
    readonly server: NatsServer,
  ) {}

  get url(): string {
    return this.server.url;
  }
  get port(): number {
    return this.server.port;
  }
  get monitorUrl(): string {
    return this.server.monitorUrl;
  }
  get storeDir(): string {
    return this.server.storeDir;
  }
  get pid(): number | undefined {
    return this.server.pid;
  }
  halt(): Promise<void> {
    return this.server.halt();
  }
  kill(): Promise<void> {
    return this.server.kill();
  }
  restart(options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.server.restart(options);
  }
  logs(): string {
    return this.server.logs();
  }
}

/** What `/jsz` says about the JetStream meta group. */
interface MetaCluster {
  readonly leader?: string;
  /** Only on the leader: the other members and whether each is current. */
  readonly replicas?: readonly { name: string; current: boolean }[];
}

class NatsClusterProcesses implements NatsCluster {
  readonly urls: readonly string[];

  constructor(
    readonly name: string,
    readonly nodes: readonly ClusterNode[],
    private readonly startTimeoutMs: number,
  ) {
    this.urls = nodes.map((n) => n.url);
  }

  async ready(options: NatsClusterWaitOptions = {}): Promise<void> {
    await this.metaLeader(options);
  }

  async metaLeader(
    options: NatsClusterWaitOptions = {},
  ): Promise<NatsClusterNode> {
    return waitFor(() => this.#currentLeader(), {
      timeoutMs: options.timeoutMs ?? this.startTimeoutMs,
      intervalMs: 100,
      message: `NATS cluster "${this.name}" to have a JetStream meta leader with every running node current`,
      ...compact({ signal: options.signal }),
    });
  }

  async nodeServing(clientName: string): Promise<NatsClusterNode | undefined> {
    for (const node of this.#running()) {
      const connz = (await monitor(node, "/connz?limit=4096")) as {
        connections?: readonly { name?: string }[];
      };
      if (connz.connections?.some((c) => c.name === clientName)) return node;
    }
    return undefined;
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.server.stop()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  #running(): ClusterNode[] {
    return this.nodes.filter((n) => n.pid !== undefined);
  }

  /** The leader when every running node names the same running one and it sees them current. */
  async #currentLeader(): Promise<ClusterNode | undefined> {
    const running = this.#running();
    const metas = await Promise.all(
      running.map(async (node) => {
        const jsz = (await monitor(node, "/jsz")) as {
          meta_cluster?: MetaCluster;
        };
        return jsz.meta_cluster;
      }),
    );
    const leaderName = metas[0]?.leader;
    if (
      leaderName === undefined ||
      leaderName === "" ||
      metas.some((m) => m?.leader !== leaderName)
    ) {
      return undefined;
    }
    const index = running.findIndex((n) => n.name === leaderName);
    const leader = running[index];
    if (leader === undefined) return undefined;
    const current = new Set(
      (metas[index]?.replicas ?? [])
        .filter((r) => r.current)
        .map((r) => r.name),
    );
    return running.every((n) => n === leader || current.has(n.name))
      ? leader
      : undefined;
  }
}

async function monitor(node: NatsClusterNode, path: string): Promise<unknown> {
  const response = await fetch(`${node.monitorUrl}${path}`, {
    signal: AbortSignal.timeout(2_000),
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${node.name} ${path} answered ${String(response.status)}`);
  }
  return response.json();
}
