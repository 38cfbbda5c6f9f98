// Helm bundles on the hub with the real helm (e2e project: it starts helm): the chart packaged
// from the bundle's files, each variant's values merged in Fleet's order, a trial render, and
// the refusals at apply time naming the file and the cause.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, test } from "vitest";
import { parseBundleContent, type wire } from "@flotilla/protocol";
import { findTool } from "@flotilla/testkit";
import { parse } from "yaml";
import {
  bundleSpec,
  cluster,
  filesOf,
  refusal,
  startHarness,
} from "./bundles-fixtures.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const FIXTURES = join(ROOT, "packages/hub/test/fixtures/helm");

/** A Helm bundle spec from `dir` with fleet.yaml `fleet` (its helm, targets, customizations). */
async function helmSpec(
  dir: string,
  fleet: Record<string, unknown>,
): Promise<wire.BundleSpec__Output> {
  return bundleSpec({
    name: "greeter",
    defaultNamespace:
      typeof fleet["defaultNamespace"] === "string"
        ? fleet["defaultNamespace"]
        : "",
    targetNamespace:
      typeof fleet["namespace"] === "string" ? fleet["namespace"] : "",
    manifests: [],
    files: await filesOf(dir),
    helmJson: JSON.stringify(fleet["helm"] ?? {}),
    customizations: fleet["targetCustomizations"],
  });
}

let helm: string;
beforeAll(async () => {
  helm = await findTool("helm");
});

describe("Helm bundles on the hub", () => {
  test("the example chart: packaged, values merged per variant in Fleet's order", async () => {
    await using h = await startHarness(
      [cluster("a"), cluster("b", { region: "eu" })],
      { helm: { helm } },
    );
    const dir = join(ROOT, "examples/helm-bundle");
    const fleet = parse(
      await readFile(join(dir, "fleet.yaml"), "utf8"),
    ) as Record<string, unknown>;
    const applied = await h.manager.apply(await helmSpec(dir, fleet), "helm");
    const { contents } = applied.bundle.record;
    expect(Object.keys(contents).sort()).toEqual(["greeter", "greeter#c0"]);
    const content = (key: string) => {
      const parsed = parseBundleContent(
        h.publisher.bundleContent(contents[key] ?? "") ?? new Uint8Array(),
      );
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
      return parsed.value;
    };
    const base = content("greeter");
    expect(base.resources).toEqual([]);
    expect(base.helm).toMatchObject({
      releaseName: "greeter",
      namespace: "greeter",
      // values, then valuesFiles over them.
      values: { replicas: 2, greeting: "hello from prod" },
      valuesFrom: [],
    });
    // The customization's values and files merged over the bundle's.
    expect(content("greeter#c0").helm?.values).toEqual({
      replicas: 3,
      greeting: "hello from prod",
      color: "green",
    });
    expect(
      Buffer.from(base.helm?.chart ?? "", "base64").byteLength,
    ).toBeGreaterThan(0);

    // Packaging again gives other bytes (timestamps): the revision and content stay.
    const again = await h.manager.apply(await helmSpec(dir, fleet), "again");
    expect(again.changed).toBe(false);
    expect(again.bundle.record.contents).toEqual(contents);

    const changed = await h.manager.apply(
      await helmSpec(dir, {
        ...fleet,
        helm: { ...(fleet["helm"] as object), values: { replicas: 5 } },
      }),
      "values changed",
    );
    expect(changed.changed).toBe(true);
  });

  test("RenderBundle renders a cluster's variant with its Kubernetes version, noting valuesFrom", async () => {
    await using h = await startHarness(
      [
        { ...cluster("a"), kubernetesVersion: "1.30.2" },
        { ...cluster("b", { region: "eu" }) },
      ],
      { helm: { helm } },
    );
    const dir = join(ROOT, "examples/helm-bundle");
    const fleet = parse(
      await readFile(join(dir, "fleet.yaml"), "utf8"),
    ) as Record<string, unknown>;
    const withRefs = {
      ...fleet,
      helm: {
        ...(fleet["helm"] as object),
        valuesFrom: [{ configMapKeyRef: { name: "site", key: "values.yaml" } }],
      },
    };
    const spec = await helmSpec(dir, withRefs);
    const a = await h.manager.render("a", { spec });
    expect(a).toMatchObject({ helm: true, contentKey: "greeter" });
    expect(a.objects.map((o) => [o.kind, o.metadata.namespace])).toEqual([
      ["ConfigMap", "greeter"],
      ["Service", "greeter"],
    ]);
    expect(a.notes).toContain(
      "valuesFrom is read on the cluster, not here: ConfigMap greeter/site key values.yaml left out",
    );
    expect(a.notes.join("\n")).not.toContain("no Kubernetes version");
    const b = await h.manager.render("b", { spec });
    expect(b).toMatchObject({
      customizationName: "eu",
      contentKey: "greeter#c0",
    });
    const config = b.objects.find((o) => o.kind === "ConfigMap") as
      { data?: Record<string, string> } | undefined;
    expect(config?.data).toMatchObject({ color: "green", replicas: "3" });
    expect(b.notes.join("\n")).toContain(
      "the cluster has reported no Kubernetes version",
    );

    // Applied, the stored content renders to the same objects.
    await h.manager.apply(spec, "helm");
    const stored = await h.manager.render("b", {
      name: "greeter",
      revision: "",
    });
    expect(stored.objects).toEqual(b.objects);
  });

  test("builds a file:// dependency that is not vendored in charts/", async () => {
    await using h = await startHarness([cluster("a")], { helm: { helm } });
    const applied = await h.manager.apply(
      await helmSpec(join(FIXTURES, "with-dependency"), {
        defaultNamespace: "apps",
        helm: { values: { sub: { suffix: "x" } } },
      }),
      "dependency",
    );
    expect(applied.bundle.record.contents["apps"]).toMatch(/^sha256:/);
  });

  test("refuses a chart that fails to render, naming helm's message", async () => {
    await using h = await startHarness([cluster("a")], { helm: { helm } });
    const error = await refusal(
      h.manager.apply(
        await helmSpec(join(FIXTURES, "fails"), { helm: {} }),
        "fails",
      ),
    );
    expect(error.code).toBe("invalid_argument");
    expect(error.problems).toEqual([
      {
        path: "bundle.helm",
        message: expect.stringMatching(
          /does not render for namespace "".*size is required/s,
        ),
      },
    ]);
  });

  test("refuses a values file that is not YAML, and one that is not in the bundle", async () => {
    await using h = await startHarness([cluster("a")], { helm: { helm } });
    const error = await refusal(
      h.manager.apply(
        await helmSpec(join(FIXTURES, "bad-values"), {
          helm: { valuesFiles: ["broken.yaml", "missing.yaml"] },
        }),
        "bad values",
      ),
    );
    expect(error.problems).toEqual([
      expect.objectContaining({
        path: "bundle.helm.valuesFiles[0]",
        message: expect.stringContaining("broken.yaml is not YAML"),
      }),
      expect.objectContaining({
        path: "bundle.helm.valuesFiles[1]",
        message: "is not a file of the bundle",
      }),
    ]);
  });

  test("refuses a chart path that holds no Chart.yaml, and repository charts without a fetcher", async () => {
    await using h = await startHarness([cluster("a")], { helm: { helm } });
    const local = await refusal(
      h.manager.apply(
        await helmSpec(join(FIXTURES, "fails"), { helm: { chart: "./nope" } }),
        "no chart",
      ),
    );
    expect(local.problems[0]).toMatchObject({
      path: "bundle.helm.chart",
      message: expect.stringContaining(
        "nope/Chart.yaml is not among its files",
      ),
    });
    const remote = await refusal(
      h.manager.apply(
        await helmSpec(join(FIXTURES, "fails"), {
          helm: { repo: "https://charts.example.com", chart: "web" },
        }),
        "repo",
      ),
    );
    expect(remote.problems[0]?.message).toContain("not configured to fetch");
  });

  test("a hub without helm refuses Helm bundles", async () => {
    await using h = await startHarness([cluster("a")], {
      helm: { helm: "/nonexistent/helm" },
    });
    const error = await refusal(
      h.manager.apply(
        await helmSpec(join(ROOT, "examples/helm-bundle"), { helm: {} }),
        "no helm",
      ),
    );
    expect(error.problems[0]?.message).toMatch(/helm.*not (installed|found)/i);
  });
});
