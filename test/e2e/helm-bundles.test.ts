// Helm bundles end to end (docs/bundles.md#helm-bundles): the real hub (with helm and its chart
// fetcher), nats-server, two agent processes with the Kubernetes backend on two local API servers
// from @flotilla/testkit, and the built CLI's `bundle apply`. Each agent renders the chart with the
// real helm against its own API server and applies the objects there.
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  findTool,
  startChartRepository,
  startKubeApiServer,
  startProcess,
  waitFor,
  type KubeApiServer,
  type TestProcess,
} from "@flotilla/testkit";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startE2E, type E2E } from "./fleet.js";

interface ClusterView {
  cluster: string;
  state: string;
  message: string;
  appliedRevision?: string;
}

const EVERY_CLUSTER = ["targets:", "  - clusterSelector: {}"];

let helm: string;
let e2e: E2E;
let work: string;
const kubes = new Map<string, KubeApiServer>();
const agents: TestProcess[] = [];

/** Starts an agent for `name` (labels `region=REGION`) on a fresh local API server. */
async function startKubeAgent(name: string, region: string): Promise<void> {
  const kube = await startKubeApiServer();
  for (const ns of ["flotilla", "greeter", "team-a", "apps", "elsewhere"])
    kube.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  kubes.set(name, kube);
  const kubeconfig = join(work, `${name}.kubeconfig`);
  await writeFile(kubeconfig, kube.kubeconfig({ namespace: "flotilla" }));
  agents.push(
    startProcess({
      name: `agent ${name}`,
      args: [
        "packages/agent/dist/main.js",
        "--hub",
        e2e.hubAddress,
        "--insecure-plaintext",
        "--nats",
        e2e.natsUrls.join(","),
        "--kubernetes",
        kubeconfig,
        "--cluster-name",
        name,
        "--label",
        `region=${region}`,
        "--helm",
        helm,
        "--metrics-listen",
        "off",
        "--log-level",
        "warn",
      ],
    }),
  );
}

function kube(name: string): KubeApiServer {
  const k = kubes.get(name);
  if (k === undefined) throw new Error(`no cluster ${name}`);
  return k;
}

async function clustersOf(bundle: string): Promise<ClusterView[]> {
  const got = JSON.parse(
    await e2e.ok("bundle", "get", bundle, "-o", "json"),
  ) as {
    clusters: ClusterView[];
  };
  return got.clusters;
}

/** Waits until every cluster of `bundle` is in `state` with `revision` applied (when given). */
async function waitForState(
  bundle: string,
  state: string,
  revision?: string,
): Promise<ClusterView[]> {
  let last: ClusterView[] = [];
  await waitFor(
    async () => {
      last = await clustersOf(bundle);
      return (
        last.length === 2 &&
        last.every(
          (c) =>
            c.state === `BUNDLE_CLUSTER_STATE_${state}` &&
            (revision === undefined || c.appliedRevision === revision),
        )
      );
    },
    {
      timeoutMs: 30_000,
      intervalMs: 300,
      message: `bundle ${bundle} ${state} on both clusters (last: ${JSON.stringify(last)}; agents: ${agents.map((a) => a.lines.slice(-5).join("\n")).join("\n")})`,
    },
  );
  return last;
}

async function applyDir(dir: string, name: string): Promise<string> {
  const out = await e2e.ok(
    "bundle",
    "apply",
    dir,
    "--name",
    name,
    "-o",
    "json",
  );
  return (JSON.parse(out) as { bundle: { revision: string } }).bundle.revision;
}

/** A chart with a conditional object, for revisions that drop it. */
async function writeChart(
  dir: string,
  fleetYaml: readonly string[],
): Promise<void> {
  await mkdir(join(dir, "templates"), { recursive: true });
  await writeFile(
    join(dir, "Chart.yaml"),
    "apiVersion: v2\nname: team\nversion: 0.1.0\n",
  );
  await writeFile(join(dir, "values.yaml"), "extra: false\ncolor: blue\n");
  await writeFile(
    join(dir, "templates", "main.yaml"),
    [
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata:",
      "  name: {{ .Release.Name }}-main",
      "data:",
      "  color: {{ .Values.color | quote }}",
      "  releaseNamespace: {{ .Release.Namespace | quote }}",
      "---",
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata:",
      "  name: {{ .Release.Name }}-pinned",
      "  namespace: elsewhere",
      "data: {}",
      "{{- if .Values.extra }}",
      "---",
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata:",
      "  name: {{ .Release.Name }}-extra",
      "data: {}",
      "{{- end }}",
      "",
    ].join("\n"),
  );
  await writeFile(join(dir, "fleet.yaml"), [...fleetYaml, ""].join("\n"));
}

beforeAll(async () => {
  helm = await findTool("helm");
  work = await mkdtemp(join(tmpdir(), "flotilla-e2e-helm-"));
  e2e = await startE2E({ hubArgs: ["--helm", helm] });
}, 60_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  for (const k of kubes.values()) await k.close();
  await e2e.stop();
  await rm(work, { recursive: true, force: true });
});

describe("Helm bundles rendered by Kubernetes-backend agents", () => {
  test("a repository chart: fetched by the hub, rendered by agents that never see the repository", async () => {
    const charts = join(work, "repo-charts");
    await writeChart(join(charts, "team"), []);
    const repo = await startChartRepository(charts);
    const dir = join(work, "from-repo");
    await mkdir(dir);
    await writeFile(
      join(dir, "fleet.yaml"),
      [
        "defaultNamespace: apps",
        "helm:",
        `  repo: ${repo.url}`,
        "  chart: team",
        '  version: "0.1.0"',
        "  values: { color: teal }",
        ...EVERY_CLUSTER,
        "",
      ].join("\n"),
    );
    const revision = await applyDir(dir, "from-repo");
    // The hub has the chart now; the repository goes away before any agent exists.
    await repo.stop();
    await startKubeAgent("eu-1", "eu");
    await startKubeAgent("us-1", "us");
    await e2e.connected(2);
    await waitForState("from-repo", "READY", revision);
    for (const name of ["eu-1", "us-1"]) {
      expect(
        kube(name).object("ConfigMap", "apps", "from-repo-main")?.data,
      ).toEqual({
        color: "teal",
        releaseNamespace: "apps",
      });
      // defaultNamespace does not move an object that names its namespace.
      expect(
        kube(name).object("ConfigMap", "elsewhere", "from-repo-pinned"),
      ).toBeDefined();
    }
  }, 90_000);

  test("examples/helm-bundle: merged values, the eu customization only on the eu cluster", async () => {
    const revision = await applyDir("examples/helm-bundle", "greeter");
    await waitForState("greeter", "READY", revision);
    expect(
      kube("eu-1").object("ConfigMap", "greeter", "greeter-greeting")?.data,
    ).toEqual({ greeting: "hello from prod", color: "green", replicas: "3" });
    expect(
      kube("us-1").object("ConfigMap", "greeter", "greeter-greeting")?.data,
    ).toEqual({ greeting: "hello from prod", color: "blue", replicas: "2" });
    for (const name of ["eu-1", "us-1"]) {
      const service = kube(name).object("Service", "greeter", "greeter");
      expect(service?.metadata).toMatchObject({
        labels: { "flotilla.dev/bundle": "greeter" },
      });
    }
  }, 60_000);

  test("fleet.yaml namespace forces the release namespace; the next revision prunes a dropped object", async () => {
    const dir = join(work, "team");
    const fleet = (extra: boolean) => [
      "namespace: team-a",
      "helm:",
      "  releaseName: team",
      `  values: { extra: ${String(extra)} }`,
      ...EVERY_CLUSTER,
    ];
    await writeChart(dir, fleet(true));
    const first = await applyDir(dir, "team");
    await waitForState("team", "READY", first);
    for (const name of ["eu-1", "us-1"]) {
      expect(
        kube(name).object("ConfigMap", "team-a", "team-main")?.data,
      ).toEqual({
        color: "blue",
        releaseNamespace: "team-a",
      });
      // The forced namespace moves an object that names another one.
      expect(
        kube(name).object("ConfigMap", "team-a", "team-pinned"),
      ).toBeDefined();
      expect(
        kube(name).object("ConfigMap", "elsewhere", "team-pinned"),
      ).toBeUndefined();
      expect(
        kube(name).object("ConfigMap", "team-a", "team-extra"),
      ).toBeDefined();
    }
    await writeChart(dir, fleet(false));
    const second = await applyDir(dir, "team");
    expect(second).not.toBe(first);
    await waitForState("team", "READY", second);
    for (const name of ["eu-1", "us-1"]) {
      expect(
        kube(name).object("ConfigMap", "team-a", "team-extra"),
      ).toBeUndefined();
      expect(
        kube(name).object("ConfigMap", "team-a", "team-main"),
      ).toBeDefined();
    }
  }, 60_000);

  test("a missing valuesFrom ConfigMap is ErrApplied naming it, nothing applied; redeploy reads it once it exists", async () => {
    const dir = join(work, "from-cluster");
    await cp(join(work, "team"), dir, { recursive: true });
    await writeFile(
      join(dir, "fleet.yaml"),
      [
        "defaultNamespace: apps",
        "helm:",
        "  releaseName: fc",
        "  valuesFrom:",
        "    - configMapKeyRef: { name: cluster-values }",
        ...EVERY_CLUSTER,
        "",
      ].join("\n"),
    );
    await applyDir(dir, "from-cluster");
    const failed = await waitForState("from-cluster", "ERR_APPLIED");
    for (const c of failed)
      expect(c.message).toContain(
        'valuesFrom ConfigMap apps/cluster-values key "values.yaml": the ConfigMap does not exist',
      );
    for (const name of ["eu-1", "us-1"])
      expect(
        kube(name)
          .objects("ConfigMap")
          .filter(
            (o) =>
              (o.metadata as { labels?: Record<string, string> }).labels?.[
                "flotilla.dev/bundle"
              ] === "from-cluster",
          ),
      ).toEqual([]);

    // The values appear on each cluster (they never leave it); a redeploy reads them.
    for (const [name, color] of [
      ["eu-1", "gold"],
      ["us-1", "silver"],
    ] as const)
      kube(name).put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "cluster-values", namespace: "apps" },
        data: { "values.yaml": `color: ${color}\n` },
      });
    await e2e.ok("bundle", "redeploy", "from-cluster");
    await waitForState("from-cluster", "READY");
    expect(
      kube("eu-1").object("ConfigMap", "apps", "fc-main")?.data,
    ).toMatchObject({
      color: "gold",
    });
    expect(
      kube("us-1").object("ConfigMap", "apps", "fc-main")?.data,
    ).toMatchObject({
      color: "silver",
    });
  }, 60_000);
});
