// `flotilla-agent --kubernetes KUBECONFIG` end to end, in process through `main`: the local
// Kubernetes API server from @flotilla/testkit (no real cluster or Docker exists on the development
// machines), a real nats-server and a fake hub. The agent connects, reports facts read from the
// API server (version, node pools, labels, the owner's windows) and applies an intent's bundle
// into the API server.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  startKubeApiServer,
  startNatsServer,
  waitFor,
  type KubeApiServer,
  type NatsServer,
} from "@flotilla/testkit";
import type { BundleContent } from "@flotilla/protocol";
import { pino } from "pino";
import { afterAll, beforeAll, expect, test } from "vitest";
import { main } from "../src/main.js";
import { rollOutDeployments } from "./support/client-node-setup.js";
import { FakeHub } from "./support/fake-hub.js";
import { setNode } from "./support/kube-upgrade-fixtures.js";
import {
  bundleContent,
  connectTo,
  TestIntents,
} from "./support/test-intents.js";

const WINDOWS = `maintenance:
  kubernetes:
    - schedule: { weekly: { dayOfWeek: Saturday } }
      startTime: "22:00"
      durationHours: 4
`;

let nats: NatsServer;
let nc: NatsConnection;
let dir: string;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connectTo(nats.url);
  dir = await mkdtemp(join(tmpdir(), "flotilla-agent-kube-"));
});
afterAll(async () => {
  await nc.close();
  await nats.stop();
  await rm(dir, { recursive: true, force: true });
});

test("an agent on a kubeconfig reports the API server's facts and applies its intent there", async () => {
  await using kube = await startKubeApiServer({ gitVersion: "v1.31.2+k3s1" });
  for (const name of ["flotilla", "apps"])
    kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  setNode(kube, "cp-1", "v1.31.2+k3s1", {
    "node-role.kubernetes.io/control-plane": "true",
  });
  setNode(kube, "pool-a-1", "v1.30.6+k3s1", {
    "cluster.x-k8s.io/deployment-name": "pool-a",
  });
  kube.put({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "owner-windows", namespace: "flotilla" },
    data: { "windows.yaml": WINDOWS },
  });
  const kubeconfig = join(dir, "kubeconfig.json");
  await writeFile(kubeconfig, kube.kubeconfig({ namespace: "flotilla" }));

  await using hub = await FakeHub.start();
  const intents = await TestIntents.open(nc, "kube");
  const digest = await intents.putContent(bundleContent("web", "r1"));
  await intents.publish({
    apiVersion: "flotilla.dev/v1",
    cluster: "edge-1",
    generation: 1,
    bundles: { web: { revision: "r1", digest } },
  });

  const agent = runAgent(kubeconfig, hub.address, "kube", [
    "--windows-configmap",
    "owner-windows",
    "--label",
    "ring=canary",
    "--region",
    "eu-west-1",
  ]);
  const stderr = (): string => agent.stderr;
  try {
    const session = await waitFor(
      () => hub.live("edge-1")?.messages.find((m) => m.facts !== undefined),
      {
        timeoutMs: 10_000,
        message: `a hello with facts (stderr: ${stderr()})`,
      },
    );
    // The context's namespace holds the windows ConfigMap; the version is /version's.
    expect(session.facts).toMatchObject({
      labels: { ring: "canary" },
      region: "eu-west-1",
      kubernetesVersion: "1.31.2",
      nodePools: [
        {
          name: "control-plane",
          imageFamily: "Ubuntu 24.04 LTS",
          imageVersion: "6.8.0-45-generic",
        },
        {
          name: "pool-a",
          imageFamily: "Ubuntu 24.04 LTS",
          kubernetesVersion: "1.30.6",
        },
      ],
      maintenance: {
        kubernetes: [{ recurring: { startTime: "22:00", durationHours: 4 } }],
      },
    });
    expect(session.facts?.nodePools?.[0]).not.toHaveProperty(
      "kubernetesVersion",
    );

    // The bundle lands in the API server, owned by the agent's field manager.
    await waitFor(
      () => kube.object("Deployment", "apps", "web") !== undefined,
      { timeoutMs: 10_000, message: `the Deployment (stderr: ${stderr()})` },
    );
    expect(kube.object("ConfigMap", "apps", "web-config")?.data).toEqual({
      revision: "r1",
    });
    expect(
      kube
        .requests()
        .some(
          (r) =>
            r.verb === "patch" &&
            r.path.endsWith("/deployments/web") &&
            r.query.includes("fieldManager=flotilla-agent"),
        ),
    ).toBe(true);
    await waitFor(
      () => {
        rollOutDeployments(kube);
        return hub.statusesOf("edge-1").at(-1)?.phase === "Ready";
      },
      { timeoutMs: 10_000, message: "Ready reported" },
    );
    expect(hub.statusesOf("edge-1").at(-1)).toMatchObject({
      generation: 1,
      subject: { bundle: "web", revision: "r1" },
    });
  } finally {
    agent.stop();
  }
  expect(await agent.exited).toBe(0);
  expect(agent.stderr).toBe("");
}, 20_000);

test("correctDrift switched on in the intent restores a hand edit without applying again; the content's namespace labels land on the namespace", async () => {
  await using kube = await startKubeApiServer({ gitVersion: "v1.31.2+k3s1" });
  kube.put({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "flotilla" },
  });
  // "apps" does not exist: the agent creates it with the labels.
  await using run = await agentHoldingWeb(kube, "drift", {
    ...bundleContent("web", "r1"),
    namespaceLabels: { team: "web" },
    namespaceAnnotations: { "example.com/owner": "web team" },
  });
  const { hub, agent, lastStatus } = run;
  try {
    await run.ready();
    const ns = kube.object("Namespace", "", "apps")?.metadata as
      Record<string, unknown> | undefined;
    expect(ns).toMatchObject({
      labels: { team: "web" },
      annotations: { "example.com/owner": "web team" },
    });
    kube.edit("ConfigMap", "apps", "web-config", (c) => {
      (c.data as Record<string, string>).revision = "edited by hand";
    });
    await waitFor(() => lastStatus()?.phase === "Modified", {
      timeoutMs: 10_000,
      message: "the drift reported",
    });
    const applies = kube
      .requests()
      .filter(
        (r) => r.verb === "patch" && r.path.endsWith("/deployments/web"),
      ).length;

    await run.publish(2, { correctDrift: { force: false } });
    await waitFor(
      () => {
        const last = lastStatus();
        return last?.generation === 2 && last.phase === "Ready";
      },
      { timeoutMs: 10_000, message: "Ready at generation 2" },
    );
    expect(kube.object("ConfigMap", "apps", "web-config")?.data).toEqual({
      revision: "r1",
    });
    // Only the drifted object was written: the revision was not applied again.
    expect(
      kube
        .requests()
        .filter(
          (r) => r.verb === "patch" && r.path.endsWith("/deployments/web"),
        ).length,
    ).toBe(applies);
    expect(
      hub
        .statusesOf("edge-1")
        .filter((st) => st.generation === 2)
        .map((st) => st.phase),
    ).not.toContain("Applying");
  } finally {
    agent.stop();
  }
  expect(await agent.exited).toBe(0);
}, 20_000);

/**
 * An agent for edge-1 on `kube` whose intent (generation 1) holds bundle web at r1 with `content`;
 * `publish` sends a later generation with more fields in web's entry. Disposing stops the hub.
 */
async function agentHoldingWeb(
  kube: KubeApiServer,
  prefix: string,
  content: BundleContent,
) {
  const kubeconfig = join(dir, `kubeconfig-${prefix}.json`);
  await writeFile(kubeconfig, kube.kubeconfig({ namespace: "flotilla" }));
  const hub = await FakeHub.start();
  const intents = await TestIntents.open(nc, prefix);
  const digest = await intents.putContent(content);
  const publish = (generation: number, entry: Record<string, unknown> = {}) =>
    intents.publish({
      apiVersion: "flotilla.dev/v1",
      cluster: "edge-1",
      generation,
      bundles: { web: { revision: "r1", digest, ...entry } },
    });
  await publish(1);
  const agent = runAgent(kubeconfig, hub.address, prefix);
  const lastStatus = () => hub.statusesOf("edge-1").at(-1);
  return {
    hub,
    agent,
    publish,
    lastStatus,
    /** Waits for Ready, playing the Deployment controller. */
    ready: () =>
      waitFor(
        () => {
          rollOutDeployments(kube);
          return lastStatus()?.phase === "Ready";
        },
        { timeoutMs: 10_000, message: `Ready (stderr: ${agent.stderr})` },
      ),
    [Symbol.asyncDispose]: () => hub[Symbol.asyncDispose](),
  };
}

/** Runs the agent through `main` for cluster edge-1 on `kubeconfig`, until `stop()`. */
function runAgent(
  kubeconfig: string,
  hubAddress: string,
  prefix: string,
  extra: readonly string[] = [],
): { exited: Promise<number>; stop: () => void; readonly stderr: string } {
  const stopping = new AbortController();
  const out = { stderr: "" };
  const exited = main(
    [
      "--hub",
      hubAddress,
      "--insecure-plaintext",
      "--nats",
      nats.url,
      "--intents-prefix",
      prefix,
      "--kubernetes",
      kubeconfig,
      "--cluster-name",
      "edge-1",
      "--metrics-listen",
      "off",
      ...extra,
    ],
    {},
    {
      stdout: () => undefined,
      stderr: (t) => (out.stderr += t),
      signal: stopping.signal,
      createLogger: () => pino({ level: "silent" }),
    },
  );
  return {
    exited,
    stop: () => {
      stopping.abort();
    },
    get stderr() {
      return out.stderr;
    },
  };
}

test("a redeploy (a grown forceSync, same revision) restores an object changed by hand", async () => {
  await using kube = await startKubeApiServer({ gitVersion: "v1.31.2+k3s1" });
  for (const name of ["flotilla", "apps"])
    kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  await using run = await agentHoldingWeb(
    kube,
    "redeploy",
    bundleContent("web", "r1"),
  );
  const { agent, lastStatus } = run;
  try {
    await run.ready();
    const config = kube.object("ConfigMap", "apps", "web-config");
    kube.put({ ...config, data: { revision: "edited by hand" } });
    await waitFor(() => lastStatus()?.phase === "Modified", {
      timeoutMs: 10_000,
      message: "the drift reported",
    });

    await run.publish(2, { forceSync: 1 });
    await waitFor(
      () => {
        rollOutDeployments(kube);
        const last = lastStatus();
        return last?.generation === 2 && last.phase === "Ready";
      },
      { timeoutMs: 10_000, message: "Ready again at generation 2" },
    );
    expect(kube.object("ConfigMap", "apps", "web-config")?.data).toEqual({
      revision: "r1",
    });
    expect(lastStatus()?.subject).toMatchObject({ revision: "r1" });
  } finally {
    agent.stop();
  }
  expect(await agent.exited).toBe(0);
}, 20_000);
