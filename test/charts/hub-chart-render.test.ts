/**
 * The flotilla-hub chart rendered by a real helm (`helm template`, helm.ts): one replica renders
 * as it always has (Recreate, maxUnavailable 1, no anti-affinity), several get a majority-keeping
 * disruption budget, anti-affinity over nodes and zones and a rolling update one replica at a
 * time; probes ask /healthz and /readyz; the NATS servers and JetStream replicas reach the hub's
 * environment; values-ha.yaml renders a three-replica setup on the official NATS chart.
 */
import { describe, expect, it } from "vitest";
import {
  renderChart,
  renderedChart,
  manifestOf,
  type Manifest,
} from "./helm.js";

const CHART = "flotilla-hub";
const SELECTOR = {
  "app.kubernetes.io/name": "flotilla-hub",
  "app.kubernetes.io/instance": "flotilla-hub",
};

function render(
  values: Record<string, unknown> = {},
  valuesFiles: readonly string[] = [],
) {
  return renderedChart(CHART, values, { valuesFiles });
}

interface PodSpec {
  affinity?: Record<string, unknown>;
  containers: {
    env: { name: string; value: string }[];
    livenessProbe: Record<string, unknown>;
    readinessProbe: Record<string, unknown>;
  }[];
}

/** The parts of the Deployment the tests look at. */
function deploymentOf(manifests: readonly Manifest[]) {
  const spec = manifestOf(manifests, "Deployment").spec as {
    replicas: number;
    strategy: Record<string, unknown>;
    template: { spec: PodSpec };
  };
  const pod = spec.template.spec;
  const [hub] = pod.containers;
  if (hub === undefined) throw new Error("no container");
  const env = new Map(hub.env.map((e) => [e.name, e.value]));
  return { spec, pod, hub, env };
}

function pdbSpecOf(manifests: readonly Manifest[]): Record<string, unknown> {
  return manifestOf(manifests, "PodDisruptionBudget").spec as Record<
    string,
    unknown
  >;
}

describe("the flotilla-hub chart, rendered", () => {
  it("renders one replica as before: Recreate, maxUnavailable 1, no anti-affinity, one Service", async () => {
    const manifests = await render();
    expect(manifests.map((m) => m.kind).sort()).toEqual([
      "Deployment",
      "PodDisruptionBudget",
      "Service",
      "ServiceAccount",
    ]);
    const { spec, pod, env } = deploymentOf(manifests);
    expect(spec.replicas).toBe(1);
    expect(spec.strategy).toEqual({ type: "Recreate" });
    expect(pod.affinity).toBeUndefined();
    expect(pdbSpecOf(manifests)).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: SELECTOR },
    });
    expect(env.get("FLOTILLA_NATS")).toBe(
      "nats://nats.flotilla-system.svc:4222",
    );
    expect(env.get("FLOTILLA_JETSTREAM_REPLICAS")).toBe("1");
    const service = manifestOf(manifests, "Service");
    expect(service.spec).toMatchObject({
      type: "ClusterIP",
      selector: SELECTOR,
    });
  });

  it("probes liveness on /healthz and readiness on /readyz", async () => {
    const { hub } = deploymentOf(await render());
    expect(hub.livenessProbe).toEqual({
      httpGet: { path: "/healthz", port: "http" },
      initialDelaySeconds: 10,
      periodSeconds: 20,
      timeoutSeconds: 5,
      failureThreshold: 3,
    });
    expect(hub.readinessProbe).toMatchObject({
      httpGet: { path: "/readyz", port: "http" },
    });
  });

  it("runs three replicas with a majority budget, spread over nodes and zones, replaced one at a time", async () => {
    const manifests = await render({ replicaCount: 3 });
    const { spec, pod } = deploymentOf(manifests);
    expect(spec.replicas).toBe(3);
    expect(spec.strategy).toEqual({
      type: "RollingUpdate",
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    });
    // maxUnavailable applies to one replica; several keep a majority.
    expect(pdbSpecOf(manifests)).toEqual({
      minAvailable: 2,
      selector: { matchLabels: SELECTOR },
    });
    const term = (topologyKey: string) => ({
      weight: 100,
      podAffinityTerm: {
        topologyKey,
        labelSelector: { matchLabels: SELECTOR },
      },
    });
    expect(pod.affinity).toEqual({
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          term("kubernetes.io/hostname"),
          term("topology.kubernetes.io/zone"),
        ],
      },
    });
    // The Service fronts every replica.
    expect(manifestOf(manifests, "Service").spec).toMatchObject({
      type: "ClusterIP",
      selector: SELECTOR,
    });
  });

  it("keeps a majority of five, and takes minAvailable when it is set", async () => {
    expect(pdbSpecOf(await render({ replicaCount: 5 }))).toMatchObject({
      minAvailable: 3,
    });
    const custom = pdbSpecOf(
      await render({
        replicaCount: 5,
        podDisruptionBudget: { maxUnavailable: null, minAvailable: 4 },
      }),
    );
    expect(custom).toMatchObject({ minAvailable: 4 });
    expect(custom).not.toHaveProperty("maxUnavailable");
  });

  it("makes anti-affinity required when asked, beside the pods' own affinity", async () => {
    const nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          {
            matchExpressions: [
              { key: "pool", operator: "In", values: ["control"] },
            ],
          },
        ],
      },
    };
    const { pod } = deploymentOf(
      await render({
        replicaCount: 3,
        podAntiAffinity: {
          mode: "required",
          topologyKeys: ["kubernetes.io/hostname"],
        },
        affinity: { nodeAffinity },
      }),
    );
    expect(pod.affinity).toEqual({
      nodeAffinity,
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          {
            topologyKey: "kubernetes.io/hostname",
            labelSelector: { matchLabels: SELECTOR },
          },
        ],
      },
    });
  });

  it("leaves anti-affinity to the affinity value when it has one, and out with mode none", async () => {
    const own = { preferredDuringSchedulingIgnoredDuringExecution: [] };
    const withOwn = deploymentOf(
      await render({ replicaCount: 3, affinity: { podAntiAffinity: own } }),
    );
    expect(withOwn.pod.affinity).toEqual({ podAntiAffinity: own });
    const none = deploymentOf(
      await render({ replicaCount: 3, podAntiAffinity: { mode: "none" } }),
    );
    expect(none.pod.affinity).toBeUndefined();
  });

  it("gives the hub nats.urls joined, or nats.url (the older form) when set", async () => {
    const urls = ["nats://a:4222", "nats://b:4222"];
    expect(
      deploymentOf(await render({ nats: { urls } })).env.get("FLOTILLA_NATS"),
    ).toBe("nats://a:4222,nats://b:4222");
    expect(
      deploymentOf(
        await render({ nats: { url: "nats://old-1:4222,nats://old-2:4222" } }),
      ).env.get("FLOTILLA_NATS"),
    ).toBe("nats://old-1:4222,nats://old-2:4222");
  });

  it("adds a headless Service for every replica's address, named in the serving certificate", async () => {
    const manifests = await render({
      service: { headless: { enabled: true } },
    });
    const headless = manifestOf(manifests, "Service", "flotilla-hub-headless");
    expect(headless.spec).toEqual({
      clusterIP: "None",
      selector: SELECTOR,
      ports: [
        {
          name: "grpc",
          port: 7070,
          targetPort: "grpc",
          protocol: "TCP",
          appProtocol: "grpc",
        },
      ],
    });
    const sans = deploymentOf(manifests).env.get("FLOTILLA_TLS_SAN") ?? "";
    expect(sans.split(",")).toEqual(
      expect.arrayContaining([
        "flotilla-hub.flotilla-system.svc",
        "flotilla-hub-headless",
        "flotilla-hub-headless.flotilla-system.svc",
        "flotilla-hub-headless.flotilla-system.svc.cluster.local",
      ]),
    );
  });

  it("renders values-ha.yaml: three replicas on the NATS chart's three servers, JetStream R3", async () => {
    const manifests = await render({}, ["values-ha.yaml"]);
    const { spec, pod, env } = deploymentOf(manifests);
    expect(spec.replicas).toBe(3);
    expect(env.get("FLOTILLA_JETSTREAM_REPLICAS")).toBe("3");
    expect(env.get("FLOTILLA_NATS")?.split(",")).toEqual([
      "nats://nats-0.nats-headless.flotilla-system.svc:4222",
      "nats://nats-1.nats-headless.flotilla-system.svc:4222",
      "nats://nats-2.nats-headless.flotilla-system.svc:4222",
    ]);
    expect(pdbSpecOf(manifests)).toMatchObject({ minAvailable: 2 });
    expect(pod.affinity).toHaveProperty("podAntiAffinity");
    expect(
      manifests.filter((m) => m.kind === "Service").map((m) => m.metadata.name),
    ).toEqual(["flotilla-hub", "flotilla-hub-headless"]);
  });

  it("refuses bad values naming the field", async () => {
    const bad = await renderChart(CHART, { jetstream: { replicas: 7 } });
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.problems[0]?.message).toMatch(/jetstream\.replicas/);
    const empty = await renderChart(CHART, { nats: { urls: [] } });
    expect(empty.ok).toBe(false);
    if (!empty.ok) expect(empty.problems[0]?.message).toMatch(/nats\.urls/);
  });
});
