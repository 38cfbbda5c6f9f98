// Per-cluster views (docs/bundles.md#what-a-cluster-gets): RenderBundle of a spec not applied and
// of an applied bundle, per customization, with patches and the namespace rules; the clusters it
// does not target and why; unknown names; and every bundle on one cluster with its state there.
import { describe, expect, test } from "vitest";
import { parseBundleContent } from "@flotilla/protocol";
import { BUNDLES } from "../src/bundles/bundle-record.js";
import {
  applyAndSettle,
  bundleSpec,
  cluster,
  configMap,
  holding,
  refusal,
  report,
  reportReady,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

const patchApp = (data: Record<string, unknown>) => ({
  target: { kind: "ConfigMap", name: "app" },
  patch: { data },
});

const base = JSON.parse(configMap("1")) as Record<string, unknown>;

/** A spec with a Deployment-less pair of objects: a ConfigMap and a CRD kind, customized per region. */
const spec = (overrides: Parameters<typeof bundleSpec>[0] = {}) =>
  bundleSpec({
    manifests: [
      { path: "app.json", yaml: Buffer.from(configMap("1")), content: "yaml" },
      {
        path: "widget.yaml",
        yaml: Buffer.from(
          "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
        ),
        content: "yaml",
      },
    ],
    targets: [
      { clusterSelector: "region notin (za)" },
      { clusterSelector: "region=za", doNotDeploy: true },
    ],
    customizations: [
      {
        name: "europe",
        clusterSelector: "region=eu",
        patches: [patchApp({ region: "eu" })],
      },
      {
        name: "america",
        clusterSelector: "region=us",
        namespace: "locked",
        patches: [patchApp({ region: "us" })],
      },
      { name: "off", clusterSelector: "region=ap", doNotDeploy: true },
    ],
    ...overrides,
  });

async function fleet(): Promise<Harness> {
  return startHarness([
    cluster("eu-1", { region: "eu" }),
    cluster("us-1", { region: "us" }),
    cluster("ap-1", { region: "ap" }),
    cluster("za-1", { region: "za" }),
    cluster("xx-1", { region: "xx" }),
  ]);
}

describe("RenderBundle of a spec not applied", () => {
  test("each cluster gets its customization's patched objects, placed by its namespace rules; nothing is stored", async () => {
    await using h = await fleet();
    const eu = await h.manager.render("eu-1", { spec: spec() });
    expect(eu).toMatchObject({
      bundle: "web",
      cluster: "eu-1",
      contentKey: "web#c0",
      customizationIndex: 0,
      customizationName: "europe",
      defaultNamespace: "web",
      targetNamespace: "",
      helm: false,
    });
    expect(eu.notTargeted).toBeUndefined();
    expect(eu.objects).toEqual([
      {
        ...base,
        metadata: { name: "app", namespace: "web" },
        data: { version: "1", region: "eu" },
      },
      { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" } },
    ]);
    expect(eu.notes.join("\n")).toContain("Widget w by the cluster's API");

    const us = await h.manager.render("us-1", { spec: spec() });
    expect(us).toMatchObject({
      contentKey: "web>locked#c1",
      customizationName: "america",
      targetNamespace: "locked",
    });
    expect(us.objects[0]).toEqual({
      ...base,
      metadata: { name: "app", namespace: "locked" },
      data: { version: "1", region: "us" },
    });

    const plain = await h.manager.render("xx-1", { spec: spec() });
    expect(plain.customizationIndex).toBeUndefined();
    expect(plain.objects[0]).toEqual({
      ...base,
      metadata: { name: "app", namespace: "web" },
    });
    expect(await h.store.get(BUNDLES, "web")).toBeUndefined();
    expect(h.publisher.snapshot().size).toBe(0);

    // The same spec applied has the revision the render named.
    const { bundle } = await h.manager.apply(spec(), "apply");
    expect(bundle.record.revision).toBe(eu.revision);
  });

  test("a cluster that is not a target gets nothing, and the render says why", async () => {
    await using h = await fleet();
    const ap = await h.manager.render("ap-1", { spec: spec() });
    expect(ap.objects).toEqual([]);
    expect(ap.notTargeted).toBe(
      "the target customization it matches (targetCustomizations[2]) sets doNotDeploy",
    );
    const za = await h.manager.render("za-1", { spec: spec() });
    expect(za.notTargeted).toBe(
      "the first entry of targets it matches (targets[1]) sets doNotDeploy",
    );
    const none = await h.manager.render("eu-1", {
      spec: spec({ targets: [{ clusterName: "elsewhere" }] }),
    });
    expect(none.notTargeted).toBe("no entry of targets matches it");
  });

  test("a bad spec is refused as apply refuses it; an unknown cluster is NOT_FOUND", async () => {
    await using h = await fleet();
    const bad = spec({
      customizations: [
        { clusterSelector: "region=eu", patches: [patchApp({ a: 1 })] },
        {
          clusterSelector: "region=us",
          patches: [
            { target: { kind: "ConfigMap", name: "nope" }, patch: { x: 1 } },
          ],
        },
      ],
    });
    const rendered = await refusal(h.manager.render("eu-1", { spec: bad }));
    const applied = await refusal(h.manager.apply(bad, "x"));
    expect(rendered.code).toBe("invalid_argument");
    expect(rendered.problems).toEqual(applied.problems);
    expect(rendered.problems[0]?.path).toContain(
      "bundle.targetCustomizations[1]",
    );

    const unknown = await refusal(
      h.manager.render("nowhere", { spec: spec() }),
    );
    expect(unknown.code).toBe("not_found");
    expect(unknown.message).toContain('"nowhere"');
  });
});

describe("RenderBundle of an applied bundle", () => {
  test("it is the content the cluster was released, placed; a revision the cluster holds can be asked for", async () => {
    await using h = await fleet();
    const r1 = await applyAndSettle(h, spec());
    const ref = h.publisher.snapshot().get("eu-1")?.intent.bundles["web"];
    const released = parseBundleContent(
      h.publisher.bundleContent(ref?.digest ?? "") ?? new Uint8Array(),
    );
    if (!released.ok) throw new Error("no content released");

    const eu = await h.manager.render("eu-1", { name: "web", revision: "" });
    expect(eu).toMatchObject({
      revision: r1,
      contentDigest: ref?.digest,
      customizationName: "europe",
    });
    // The agent's content, with the default namespace it applies to namespaced kinds.
    expect(eu.objects[0]).toEqual({
      ...released.value.resources[0],
      metadata: { name: "app", namespace: "web" },
    });
    expect(eu.objects[1]).toEqual(released.value.resources[1]);
    const fromSpec = await h.manager.render("eu-1", { spec: spec() });
    expect(fromSpec.objects).toEqual(eu.objects);

    await reportReady(h, holding(h, r1), r1);
    await h.manager.setPaused("web", true, "hold");
    const r2 = await applyAndSettle(
      h,
      spec({ paused: true, manifests: spec().manifests.slice(0, 1) }),
    );
    expect(r2).not.toBe(r1);
    const held = await h.manager.render("eu-1", { name: "web", revision: r1 });
    expect(held.revision).toBe(r1);
    expect(held.objects).toHaveLength(2);
    const current = await h.manager.render("eu-1", {
      name: "web",
      revision: r2,
    });
    expect(current.objects).toHaveLength(1);

    const gone = await refusal(
      h.manager.render("eu-1", { name: "web", revision: "0123456789abcdef" }),
    );
    expect(gone.code).toBe("not_found");
    expect(gone.message).toContain(`cluster eu-1 holds ${r1}`);
    const noBundle = await refusal(
      h.manager.render("eu-1", { name: "nope", revision: "" }),
    );
    expect(noBundle.code).toBe("not_found");
    expect(noBundle.message).toContain('"nope"');
  });
});

describe("the bundles on a cluster", () => {
  test("every bundle that targets the cluster, with its state, revisions and hold reason", async () => {
    await using h = await fleet();
    const r1 = await applyAndSettle(h, spec());
    const other = await applyAndSettle(
      h,
      bundleSpec({ name: "api", targets: [{ clusterName: "eu-1" }] }),
    );
    h.manager.onStatus("eu-1", report(h, "eu-1", r1, "Ready"));
    h.manager.onStatus("eu-1", report(h, "eu-1", other, "Failed", {}, "api"));
    await h.manager.idle();

    const eu = await h.manager.clusterBundles("eu-1");
    expect(eu.map((b) => [b.bundle, b.view.state])).toEqual([
      ["api", "ErrApplied"],
      ["web", "Ready"],
    ]);
    expect(eu[0]).toMatchObject({
      revision: other,
      view: {
        cluster: "eu-1",
        releasedRevision: other,
        message: "apply failed",
      },
    });

    // A paused bundle's new revision: the cluster is held, with the reason.
    await h.manager.setPaused("web", true, "hold");
    await applyAndSettle(
      h,
      spec({ paused: true, manifests: spec().manifests.slice(0, 1) }),
    );
    const after = await h.manager.clusterBundles("eu-1");
    expect(after[1]?.view).toMatchObject({
      state: "OutOfSync",
      held: "Paused",
      releasedRevision: r1,
    });

    expect(await h.manager.clusterBundles("ap-1")).toEqual([]);
    expect((await refusal(h.manager.clusterBundles("nowhere"))).code).toBe(
      "not_found",
    );
  });

  test("one cluster's bundles among 1,000 are read without looking at other targets", async () => {
    await using h = await startHarness([cluster("one", { region: "eu" })]);
    for (let i = 0; i < 1000; i++)
      await h.manager.apply(
        bundleSpec({ name: `b-${String(i).padStart(4, "0")}` }),
        "load",
      );
    await h.manager.idle();
    const started = performance.now();
    const views = await h.manager.clusterBundles("one");
    const ms = performance.now() - started;
    expect(views).toHaveLength(1000);
    expect(views[0]?.bundle).toBe("b-0000");
    // Printed for the record; generous bound for a loaded machine.
    console.log(
      `clusterBundles: 1,000 bundles x 1 cluster in ${ms.toFixed(1)} ms`,
    );
    expect(ms).toBeLessThan(1000);
  });
});
