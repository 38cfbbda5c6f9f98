// Helm bundles rendered by the Kubernetes backend (docs/bundles.md#helm-bundles) with the real
// helm against the testkit's local API server: the cluster's version and discovery as
// capabilities, valuesFrom read from its ConfigMaps and Secrets, helm's own errors, and the render
// cache. helm runs as a process, so this is an e2e test file (vitest.config.ts).
import {
  chmod,
  mkdir,
  mkdtemp,
  readFile,
  rm,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { runHelm, systemClock } from "@flotilla/node";
import type { BundleContent, BundleHelm } from "@flotilla/protocol";
import {
  findTool,
  startKubeApiServer,
  type KubeApiServer,
} from "@flotilla/testkit";
import { KubeConfig } from "@kubernetes/client-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  createKubernetesBackend,
  type KubernetesBackend,
} from "../src/runtime/kubernetes-backend.js";

/** A chart exercising what the agent gives helm: values, capabilities, lookup, conditions, tests. */
const PROBE_CHART: Readonly<Record<string, string>> = {
  "Chart.yaml": "apiVersion: v2\nname: probe\nversion: 0.1.0\n",
  "values.yaml": "greeting: hi\nextra: false\nneedsLookup: false\n",
  "templates/probe.yaml": [
    "apiVersion: v1",
    "kind: ConfigMap",
    "metadata:",
    "  name: {{ .Release.Name }}-probe",
    "data:",
    "  greeting: {{ .Values.greeting | quote }}",
    '  color: {{ .Values.color | default "none" | quote }}',
    "  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}",
    '  widgets: {{ .Capabilities.APIVersions.Has "example.com/v1/Widget" | quote }}',
    '  gadgets: {{ .Capabilities.APIVersions.Has "example.com/v1/Gadget" | quote }}',
    "  releaseNamespace: {{ .Release.Namespace | quote }}",
    "",
  ].join("\n"),
  "templates/extra.yaml": [
    "{{- if .Values.extra }}",
    "apiVersion: v1",
    "kind: ConfigMap",
    "metadata:",
    "  name: {{ .Release.Name }}-extra",
    "data: {}",
    "{{- end }}",
    "",
  ].join("\n"),
  "templates/needs-lookup.yaml": [
    "{{- if .Values.needsLookup }}",
    '{{- if not (lookup "v1" "Secret" "kube-system" "needed") }}',
    '{{- fail "the Secret kube-system/needed is required" }}',
    "{{- end }}",
    "{{- end }}",
    "",
  ].join("\n"),
  "templates/tests/test-connection.yaml": [
    "apiVersion: v1",
    "kind: Pod",
    "metadata:",
    "  name: {{ .Release.Name }}-test",
    '  annotations: { "helm.sh/hook": test }',
    "spec:",
    "  containers: [{ name: t, image: busybox }]",
    "",
  ].join("\n"),
};

let helm: string;
let work: string;
let chart: string;

/** `helm package` of `files`, base64, as the hub stores it. */
async function packageChart(
  files: Readonly<Record<string, string>>,
): Promise<string> {
  const dir = await mkdtemp(join(work, "chart-"));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, "src", path)), { recursive: true });
    await writeFile(join(dir, "src", path), text);
  }
  const packaged = await runHelm(helm, [
    "package",
    join(dir, "src"),
    "--destination",
    join(dir, "out"),
  ]);
  if (!packaged.ok) throw new Error(JSON.stringify(packaged.problems));
  const bytes = await readFile(join(dir, "out", "probe-0.1.0.tgz"));
  return bytes.toString("base64");
}

beforeAll(async () => {
  helm = await findTool("helm");
  work = await mkdtemp(join(tmpdir(), "flotilla-helm-render-test-"));
  chart = await packageChart(PROBE_CHART);
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** Content of bundle `probe` with `helm` over the defaults. */
function content(
  helmOverrides: Partial<BundleHelm> = {},
  more: Partial<BundleContent> = {},
): BundleContent & { helm: BundleHelm } {
  return {
    apiVersion: "flotilla.dev/v1",
    kind: "BundleContent",
    bundle: "probe",
    revision: "r1",
    namespace: "apps",
    resources: [],
    ...more,
    helm: {
      chart,
      releaseName: "probe",
      namespace: "apps",
      values: {},
      valuesFrom: [],
      skipSchemaValidation: false,
      ...helmOverrides,
    },
  };
}

async function backendOn(
  server: KubeApiServer,
  helmBinary = helm,
): Promise<KubernetesBackend> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(server.kubeconfig());
  const backend = createKubernetesBackend(
    { kubeConfig, logger: pino({ level: "silent" }), clock: systemClock },
    {
      clusterName: "edge-1",
      namespace: "flotilla",
      windowsConfigMap: "flotilla-agent-windows",
      upgradeDriver: { type: "none" },
      helm: helmBinary,
    },
  );
  await backend.start();
  return backend;
}

async function cluster(): Promise<KubeApiServer> {
  const server = await startKubeApiServer({ gitVersion: "v1.30.4+k3s1" });
  for (const name of ["flotilla", "apps", "shared"])
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
  return server;
}

function render(
  backend: KubernetesBackend,
  c: BundleContent & { helm: BundleHelm },
): Promise<readonly Record<string, unknown>[]> {
  if (backend.renderHelm === undefined) throw new Error("no renderHelm");
  return backend.renderHelm(c, {});
}

function dataOf(
  objects: readonly Record<string, unknown>[],
  name: string,
): unknown {
  return objects.find(
    (o) => (o.metadata as { name?: string } | undefined)?.name === name,
  )?.data;
}

const WIDGET_CRD = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { kind: "Widget", plural: "widgets", singular: "widget" },
    versions: [{ name: "v1", served: true, storage: true }],
  },
};

describe("the Kubernetes backend renders Helm bundles", () => {
  test("values, the cluster's version and discovery, valuesFrom in order; chart tests left out", async () => {
    await using server = await cluster();
    server.put(WIDGET_CRD);
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "overrides", namespace: "apps" },
      data: { "values.yaml": "color: green\ngreeting: from the ConfigMap\n" },
    });
    server.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "secret-values", namespace: "shared" },
      data: {
        "custom.yaml": Buffer.from("greeting: from the Secret\n").toString(
          "base64",
        ),
      },
    });
    await using backend = await backendOn(server);
    const only = await render(
      backend,
      content({ values: { greeting: "from the bundle", extra: true } }),
    );
    expect(dataOf(only, "probe-probe")).toEqual({
      greeting: "from the bundle",
      color: "none",
      kubeVersion: "v1.30.4+k3s1",
      widgets: "true",
      gadgets: "false",
      releaseNamespace: "apps",
    });
    // The conditional template renders; the chart's test Pod does not.
    expect(
      only
        .map(
          (o) => `${String(o.kind)}/${(o.metadata as { name: string }).name}`,
        )
        .sort(),
    ).toEqual(["ConfigMap/probe-extra", "ConfigMap/probe-probe"]);

    // valuesFrom: the ConfigMap (release namespace, default key), then the Secret, over values.
    const merged = await render(
      backend,
      content({
        values: { greeting: "from the bundle" },
        valuesFrom: [
          { kind: "ConfigMap", name: "overrides", key: "values.yaml" },
          {
            kind: "Secret",
            name: "secret-values",
            namespace: "shared",
            key: "custom.yaml",
          },
        ],
      }),
    );
    expect(dataOf(merged, "probe-probe")).toMatchObject({
      greeting: "from the Secret",
      color: "green",
    });
  });

  test("fleet.yaml namespace is the release namespace and valuesFrom's default", async () => {
    await using server = await cluster();
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "overrides", namespace: "shared" },
      data: { "values.yaml": "color: red\n" },
    });
    await using backend = await backendOn(server);
    const objects = await render(
      backend,
      content(
        {
          valuesFrom: [
            { kind: "ConfigMap", name: "overrides", key: "values.yaml" },
          ],
        },
        { targetNamespace: "shared" },
      ),
    );
    expect(dataOf(objects, "probe-probe")).toMatchObject({
      color: "red",
      releaseNamespace: "shared",
    });
  });

  test("a missing or unreadable valuesFrom source fails naming it", async () => {
    await using server = await cluster();
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "broken", namespace: "apps" },
      data: { "values.yaml": "a: [unclosed\n", "list.yaml": "- 1\n" },
    });
    await using backend = await backendOn(server);
    const from = (name: string, key = "values.yaml") =>
      render(
        backend,
        content({ valuesFrom: [{ kind: "ConfigMap", name, key }] }),
      );
    await expect(from("absent")).rejects.toThrow(
      'valuesFrom ConfigMap apps/absent key "values.yaml": the ConfigMap does not exist',
    );
    await expect(
      render(
        backend,
        content({
          valuesFrom: [
            { kind: "Secret", name: "gone", namespace: "shared", key: "v" },
          ],
        }),
      ),
    ).rejects.toThrow(
      'valuesFrom Secret shared/gone key "v": the Secret does not exist',
    );
    await expect(from("broken", "other.yaml")).rejects.toThrow(
      'valuesFrom ConfigMap apps/broken key "other.yaml": the ConfigMap has no such key',
    );
    await expect(from("broken")).rejects.toThrow(
      /valuesFrom ConfigMap apps\/broken key "values.yaml": is not YAML/,
    );
    await expect(from("broken", "list.yaml")).rejects.toThrow(
      'valuesFrom ConfigMap apps/broken key "list.yaml": must hold a mapping of values',
    );
  });

  test("a chart failing on an empty lookup fails with helm's message", async () => {
    await using server = await cluster();
    await using backend = await backendOn(server);
    await expect(
      render(backend, content({ values: { needsLookup: true } })),
    ).rejects.toThrow(
      /the Helm chart does not render: helm template: .*the Secret kube-system\/needed is required/s,
    );
  });

  test("renders are kept until a valuesFrom source changes; discovery is read once", async () => {
    await using server = await cluster();
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "overrides", namespace: "apps" },
      data: { "values.yaml": "color: green\n" },
    });
    // A helm that counts its runs.
    const counter = join(work, `runs-${String(Date.now())}`);
    const wrapper = join(work, `counting-helm-${String(Date.now())}`);
    await writeFile(
      wrapper,
      `#!/bin/sh\necho run >> '${counter}'\nexec '${helm}' "$@"\n`,
    );
    await chmod(wrapper, 0o755);
    const runs = async (): Promise<number> =>
      (await readFile(counter, "utf8").catch(() => "")).split("\n").length - 1;
    await using backend = await backendOn(server, wrapper);
    const c = content({
      valuesFrom: [
        { kind: "ConfigMap", name: "overrides", key: "values.yaml" },
      ],
    });
    const first = await render(backend, c);
    const discoveries = server
      .requests()
      .filter((r) => r.path === "/version").length;
    expect(await render(backend, c)).toEqual(first);
    expect(await runs()).toBe(1);
    expect(server.requests().filter((r) => r.path === "/version").length).toBe(
      discoveries,
    );

    server.edit("ConfigMap", "apps", "overrides", (cm) => {
      cm.data = { "values.yaml": "color: blue\n" };
    });
    const changed = await render(backend, c);
    expect(await runs()).toBe(2);
    expect(dataOf(changed, "probe-probe")).toMatchObject({ color: "blue" });
  });

  test("without helm, Helm bundles fail with runTool's message", async () => {
    await using server = await cluster();
    await using backend = await backendOn(server, join(work, "no-such-helm"));
    await expect(render(backend, content())).rejects.toThrow(
      /helm is not installed|no-such-helm is not installed/,
    );
  });
});
