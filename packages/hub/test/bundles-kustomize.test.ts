// Kustomize bundles on the hub with the real kubectl (e2e project: it starts kubectl): a base and
// two overlays rendered once per directory, each cluster given its customization's overlay,
// fleet.yaml `namespace` forced over the render, the revision following the files, and the
// refusals at apply time naming the file and kustomize's cause.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, test } from "vitest";
import {
  parseBundleContent,
  type KubernetesObject,
  type wire,
} from "@flotilla/protocol";
import { findTool } from "@flotilla/testkit";
import { parse } from "yaml";
import {
  bundleSpec,
  cluster,
  filesOf,
  refusal,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const EXAMPLE = join(ROOT, "examples/kustomize-bundle");

/** A Kustomize bundle spec of `files` with fleet.yaml `fleet`. */
function kustomizeSpec(
  files: readonly wire.Manifest__Output[],
  fleet: Record<string, unknown>,
): wire.BundleSpec__Output {
  const text = (key: string): string =>
    typeof fleet[key] === "string" ? fleet[key] : "";
  return bundleSpec({
    name: "greeter",
    defaultNamespace: text("defaultNamespace"),
    targetNamespace: text("namespace"),
    manifests: [],
    files: [...files],
    kustomizeJson:
      fleet["kustomize"] === undefined
        ? ""
        : JSON.stringify(fleet["kustomize"]),
    ...(fleet["targets"] === undefined
      ? {}
      : { targets: fleet["targets"] as unknown[] }),
    customizations: fleet["targetCustomizations"],
  });
}

/** `files` (path → text) as the CLI sends them. */
function filesFrom(
  files: Readonly<Record<string, string>>,
): wire.Manifest__Output[] {
  return Object.entries(files)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([path, text]) => ({
      path,
      yaml: Buffer.from(text),
      content: "yaml",
    }));
}

async function exampleFleet(): Promise<Record<string, unknown>> {
  return parse(await readFile(join(EXAMPLE, "fleet.yaml"), "utf8")) as Record<
    string,
    unknown
  >;
}

function contentOf(h: Harness, digest: string | undefined) {
  const parsed = parseBundleContent(
    h.publisher.bundleContent(digest ?? "") ?? new Uint8Array(),
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

function find(
  objects: readonly KubernetesObject[],
  kind: string,
): KubernetesObject & Record<string, unknown> {
  const found = objects.find((o) => o.kind === kind);
  if (found === undefined) throw new Error(`no ${kind}`);
  return found;
}

const BASE = {
  "base/kustomization.yaml": "resources: [app.yaml]\n",
  "base/app.yaml":
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {k: v}\n",
};

let kubectl: string;
beforeAll(async () => {
  kubectl = await findTool("kubectl");
});

describe("Kustomize bundles on the hub", () => {
  test("the example: each cluster gets its overlay's objects, in the default namespace", async () => {
    await using h = await startHarness(
      [cluster("dev-1", { env: "dev" }), cluster("prod-1", { env: "prod" })],
      { kustomize: { kubectl } },
    );
    const fleet = await exampleFleet();
    const files = await filesOf(EXAMPLE);
    const applied = await h.manager.apply(kustomizeSpec(files, fleet), "k");
    const { contents } = applied.bundle.record;
    expect(Object.keys(contents).sort()).toEqual(["greeter", "greeter#c0"]);
    const dev = contentOf(h, contents["greeter"]);
    const prod = contentOf(h, contents["greeter#c0"]);
    expect(dev.namespace).toBe("greeter");
    expect(dev.resources.map((o) => o.kind).sort()).toEqual([
      "ConfigMap",
      "Deployment",
      "Service",
    ]);
    expect(find(dev.resources, "ConfigMap")["data"]).toEqual({
      greeting: "hello from dev",
    });
    expect(find(dev.resources, "Deployment")["spec"]).toMatchObject({
      replicas: 1,
    });
    expect(find(prod.resources, "ConfigMap")["data"]).toEqual({
      greeting: "hello from prod",
    });
    expect(find(prod.resources, "Deployment")["spec"]).toMatchObject({
      replicas: 3,
    });
    // kustomize's generated name (a hash of the data) differs per overlay and is referenced.
    const name = find(prod.resources, "ConfigMap").metadata.name;
    expect(name).toMatch(/^greeter-settings-/);
    expect(JSON.stringify(find(prod.resources, "Deployment"))).toContain(name);

    // The same files give the same revision; a changed file of the prod overlay a new one.
    const again = await h.manager.apply(kustomizeSpec(files, fleet), "again");
    expect(again.changed).toBe(false);
    const edited = files.map((f) =>
      f.path === "overlays/prod/replicas.yaml"
        ? {
            ...f,
            yaml: Buffer.from(
              String(f.yaml).replace("replicas: 3", "replicas: 4"),
            ),
          }
        : f,
    );
    const changed = await h.manager.apply(
      kustomizeSpec(edited, fleet),
      "edited",
    );
    expect(changed.changed).toBe(true);
    expect(changed.bundle.record.revision).not.toBe(
      applied.bundle.record.revision,
    );
    expect(
      find(
        contentOf(h, changed.bundle.record.contents["greeter#c0"]).resources,
        "Deployment",
      )["spec"],
    ).toMatchObject({ replicas: 4 });
    // The record keeps fleet.yaml's kustomize as given.
    expect(changed.bundle.record.kustomizeJson).toBe(
      JSON.stringify(fleet["kustomize"]),
    );
  });

  test("a top kustomization without fleet.yaml kustomize, with fleet.yaml namespace forced on the render", async () => {
    await using h = await startHarness([cluster("a")], {
      kustomize: { kubectl },
    });
    const files = filesFrom({
      ...BASE,
      "kustomization.yaml":
        "resources: [base]\nnamespace: from-kustomize\nnamePrefix: top-\n",
    });
    const applied = await h.manager.apply(
      kustomizeSpec(files, { namespace: "forced" }),
      "top",
    );
    const [key] = Object.keys(applied.bundle.record.contents);
    const content = contentOf(h, applied.bundle.record.contents[key ?? ""]);
    expect(content.targetNamespace).toBe("forced");
    expect(content.resources).toEqual([
      expect.objectContaining({
        kind: "ConfigMap",
        metadata: { name: "top-app", namespace: "forced" },
      }),
    ]);
    expect(applied.warnings).toContainEqual(
      expect.objectContaining({ code: "NamespaceMovesObject" }),
    );
  });

  test("customizations only: clusters no customization matches get nothing, with a warning", async () => {
    await using h = await startHarness([cluster("a", { env: "dev" })], {
      kustomize: { kubectl },
    });
    const applied = await h.manager.apply(
      kustomizeSpec(filesFrom(BASE), {
        targetCustomizations: [
          {
            clusterSelector: { matchLabels: { env: "dev" } },
            kustomize: { dir: "base" },
          },
        ],
      }),
      "customizations only",
    );
    const { contents } = applied.bundle.record;
    expect(Object.keys(contents).sort()).toEqual(["", "#c0"]);
    expect(contentOf(h, contents[""]).resources).toEqual([]);
    expect(contentOf(h, contents["#c0"]).resources).toHaveLength(1);
    expect(applied.warnings).toContainEqual(
      expect.objectContaining({ code: "NoKustomization" }),
    );
  });

  test.each([
    [
      "a file outside the kustomization's directory (load restrictor)",
      {
        "secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
        "overlays/dev/kustomization.yaml": "resources: [../../secret.yaml]\n",
      },
      "bundle.files[0]",
      /overlays\/dev\/kustomization\.yaml does not build: .*(security|restrict|not in or below)/s,
    ],
    [
      "a missing resource",
      { "overlays/dev/kustomization.yaml": "resources: [missing.yaml]\n" },
      "bundle.files[0]",
      /overlays\/dev\/kustomization\.yaml does not build: .*missing\.yaml/s,
    ],
    [
      "invalid YAML in a kustomization",
      { "overlays/dev/kustomization.yaml": "resources: [a.yaml\n" },
      "bundle.files[0]",
      /is not a valid kustomization: not YAML/,
    ],
    [
      "invalid YAML in a resource",
      {
        "overlays/dev/kustomization.yaml": "resources: [a.yaml]\n",
        "overlays/dev/a.yaml": "kind: [ConfigMap\n",
      },
      "bundle.files[1]",
      /overlays\/dev\/kustomization\.yaml does not build: /,
    ],
    [
      "a remote base",
      {
        "overlays/dev/kustomization.yaml":
          "resources:\n- https://github.com/org/repo//base?ref=v1\n",
      },
      "bundle.files[0].resources[0]",
      /is a remote base, which the hub does not fetch/,
    ],
    [
      "helmCharts",
      {
        "overlays/dev/kustomization.yaml":
          "helmCharts:\n- name: web\n  repo: https://charts.example.com\n",
      },
      "bundle.files[0].helmCharts",
      /kustomize runs without --enable-helm/,
    ],
  ])(
    "refuses %s, naming the file, and stores nothing",
    async (_, files, path, message) => {
      await using h = await startHarness([cluster("a")], {
        kustomize: { kubectl },
      });
      const error = await refusal(
        h.manager.apply(
          kustomizeSpec(filesFrom(files), {
            kustomize: { dir: "overlays/dev" },
          }),
          "bad",
        ),
      );
      expect(error.code).toBe("invalid_argument");
      expect(error.problems).toEqual([
        expect.objectContaining({
          path,
          message: expect.stringMatching(message),
        }),
      ]);
      expect(await h.manager.list()).toEqual([]);
    },
  );

  test("refuses a kustomize.dir that is not in the bundle or holds no kustomization", async () => {
    await using h = await startHarness([cluster("a")], {
      kustomize: { kubectl },
    });
    const error = await refusal(
      h.manager.apply(
        kustomizeSpec(filesFrom({ ...BASE, "plain/app.yaml": "a: b\n" }), {
          kustomize: { dir: "overlays/nope" },
          targetCustomizations: [
            { clusterName: "a", kustomize: { dir: "plain" } },
          ],
        }),
        "bad dirs",
      ),
    );
    expect(error.problems).toEqual([
      {
        path: "bundle.kustomize.dir",
        message: "is not a directory of the bundle",
        value: "overlays/nope",
      },
      {
        path: "bundle.targetCustomizations[0].kustomize.dir",
        message: expect.stringContaining(
          "names a directory without a kustomization",
        ),
        value: "plain",
      },
    ]);
  });

  test("a hub whose kubectl is missing refuses Kustomize bundles with the not-installed message", async () => {
    await using h = await startHarness([cluster("a")], {
      kustomize: { kubectl: "/nonexistent/kubectl" },
    });
    const error = await refusal(
      h.manager.apply(
        kustomizeSpec(filesFrom(BASE), { kustomize: { dir: "base" } }),
        "no kubectl",
      ),
    );
    expect(error.problems).toEqual([
      expect.objectContaining({
        path: "bundle.kustomize.dir",
        message: expect.stringContaining(
          "Kustomize bundles need kubectl on the hub: kubectl kustomize: /nonexistent/kubectl is not installed (not found); install it, or set --kubectl or FLOTILLA_KUBECTL",
        ),
      }),
    ]);
  });
});
