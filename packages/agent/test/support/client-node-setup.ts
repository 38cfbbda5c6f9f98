/**
 * Setting up the client-node gateway against the testkit's local Kubernetes API server: a
 * kubeconfig file pointing at it, the agent's namespace, and the Deployment controller played by
 * the test.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createClientNodeGateway,
  loadKubeConfig,
  type BundleStatus,
  type ClientNodeGateway,
  type KubeGateway,
} from "@flotilla/agent";
import { systemClock, type Clock } from "@flotilla/node";
import {
  startKubeApiServer,
  waitFor,
  type JsonObject,
  type KubeApiServer,
} from "@flotilla/testkit";
import { pino } from "pino";

export const AGENT_NS = "flotilla";

export interface Setup extends AsyncDisposable {
  readonly server: KubeApiServer;
  readonly gateway: ClientNodeGateway;
  readonly kubeconfig: string;
  /** A second gateway on the same cluster (an agent restart). */
  restart(): Promise<ClientNodeGateway>;
  /** Every status the first gateway published for `bundle`, as `phase@revision`. */
  phases(bundle?: string): string[];
}

export async function setup(
  options: {
    crdEstablishment?: "immediate" | "manual";
    force?: boolean;
    /** Default the system clock. */
    clock?: Clock;
    onDriftCorrection?: (bundle: string, result: "ok" | "error") => void;
    driftBackoff?: { initialMs?: number; maxMs?: number };
  } = {},
): Promise<Setup> {
  const server = await startKubeApiServer({
    crdEstablishment: options.crdEstablishment ?? "immediate",
  });
  server.put({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: AGENT_NS },
  });
  const dir = await mkdtemp(join(tmpdir(), "flotilla-kube-"));
  const kubeconfig = join(dir, "kubeconfig");
  await writeFile(kubeconfig, server.kubeconfig());
  const gateways: ClientNodeGateway[] = [];
  const make = async (): Promise<ClientNodeGateway> => {
    const gateway = createClientNodeGateway(
      {
        kubeConfig: loadKubeConfig({ kubeconfig }),
        logger: pino({ level: "silent" }),
        clock: options.clock ?? systemClock,
        // No jitter: back-off pauses are exactly the ceilings.
        random: () => 0.5,
        ...(options.onDriftCorrection === undefined
          ? {}
          : { onDriftCorrection: options.onDriftCorrection }),
      },
      {
        namespace: AGENT_NS,
        force: options.force ?? false,
        pollIntervalMs: 10,
        watchRetryMs: 20,
        ...(options.driftBackoff === undefined
          ? {}
          : { driftBackoff: options.driftBackoff }),
      },
    );
    await gateway.start();
    gateways.push(gateway);
    return gateway;
  };
  const gateway = await make();
  const seen: BundleStatus[] = [];
  gateway.watch((s) => seen.push(s));
  return {
    server,
    gateway,
    kubeconfig,
    restart: make,
    phases: (bundle = "web") =>
      seen
        .filter((s) => s.bundle === bundle)
        .map((s) => `${s.phase}@${s.revision}`),
    async [Symbol.asyncDispose]() {
      for (const g of gateways) await g.stop();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function meta(object: JsonObject | undefined): JsonObject {
  return (object?.metadata ?? {}) as JsonObject;
}

/** Plays the Deployment controller: every Deployment becomes available at its generation. */
export function rollOutDeployments(server: KubeApiServer): void {
  for (const d of server.objects("Deployment")) {
    const m = meta(d);
    const status = (d.status ?? {}) as JsonObject;
    const replicas = ((d.spec ?? {}) as JsonObject).replicas ?? 1;
    if (
      status.observedGeneration === m.generation &&
      status.availableReplicas === replicas
    )
      continue;
    server.setStatus("Deployment", String(m.namespace), String(m.name), {
      observedGeneration: m.generation,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
    });
  }
}

/** Waits until every bundle the gateway knows has left Applying/Applied/NotReady. */
export async function settled(
  server: KubeApiServer,
  gateway: KubeGateway,
  bundles: () => string[],
): Promise<void> {
  await waitFor(
    () => {
      rollOutDeployments(server);
      return bundles().every((b) => {
        const phase = gateway.status(b)?.phase;
        return (
          phase === "Ready" ||
          phase === "Failed" ||
          phase === "Modified" ||
          phase === undefined
        );
      });
    },
    { timeoutMs: 5_000, message: "every bundle to settle" },
  );
}
