// BundleManager.apply: revisions, idempotence, refusals with field paths (nothing stored), content
// per customization, manifests by reference, and a restarted manager resuming from the store.
import { describe, expect, test } from "vitest";
import { parseBundleContent } from "@flotilla/protocol";
import { BUNDLES } from "../src/bundles/bundle-record.js";
import {
  bundleSpec,
  cluster,
  clusters,
  configMap,
  holding,
  refusal,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

async function storedRecords(h: Harness) {
  return (await h.store.list(BUNDLES)).map((e) => ({
    value: e.value,
    revision: e.revision,
  }));
}

describe("apply", () => {
  test("stores the bundle with a content-hash revision; identical content is unchanged", async () => {
    await using h = await startHarness(clusters(2));
    const first = await h.manager.apply(bundleSpec(), "first");
    expect(first.changed).toBe(true);
    const revision = first.bundle.record.revision;
    expect(revision).toMatch(/^[0-9a-f]{16}$/);
    const stored = await storedRecords(h);
    expect(stored.map((s) => s.value.revision)).toEqual([revision]);
    expect(stored[0]?.value.manifests).toEqual([
      {
        path: "app.json",
        digest: expect.stringMatching(/^sha256:/),
        sizeBytes: configMap("1").length,
      },
    ]);

    const again = await h.manager.apply(bundleSpec(), "again");
    expect(again.changed).toBe(false);
    expect(again.bundle.record.revision).toBe(revision);
    // Nothing was written: the record keeps its store revision.
    expect(await storedRecords(h)).toEqual(stored);

    const changed = await h.manager.apply(
      bundleSpec({ version: "2" }),
      "new content",
    );
    expect(changed.changed).toBe(true);
    expect(changed.bundle.record.revision).not.toBe(revision);
  });

  test("pausing or retargeting keeps the revision (what clusters get is the same)", async () => {
    await using h = await startHarness(clusters(2));
    const { bundle } = await h.manager.apply(bundleSpec(), "create");
    const paused = await h.manager.apply(bundleSpec({ paused: true }), "pause");
    expect(paused).toMatchObject({
      changed: false,
      bundle: { record: { paused: true } },
    });
    expect(paused.bundle.record.revision).toBe(bundle.record.revision);
    const retargeted = await h.manager.apply(
      bundleSpec({
        targets: [{ clusterName: "c-00" }],
        strategy: { maxUnavailable: 1 },
      }),
      "retarget",
    );
    expect(retargeted.changed).toBe(false);
    expect((await storedRecords(h))[0]?.value.targetsJson).toBe(
      '[{"clusterName":"c-00"}]',
    );
  });

  test("returns spec and plan warnings (no targets; maxUnavailable 100% gates nothing)", async () => {
    await using h = await startHarness(clusters(3));
    const none = await h.manager.apply(bundleSpec({ targetsJson: "" }), "r");
    expect(none.warnings.map((w) => w.code)).toContain("NoTargets");
    const all = await h.manager.apply(bundleSpec(), "r");
    expect(all.warnings.map((w) => w.code)).toEqual([
      "MaxUnavailableDisablesGates",
    ]);
  });

  const badSpecs: [string, Parameters<typeof bundleSpec>[0], string, RegExp][] =
    [
      ["a bad name", { name: "Web_1" }, "bundle.name", /DNS label/],
      [
        "a bad selector",
        { targets: [{ clusterSelector: { matchLabels: { env: 5 } } }] },
        "bundle.targets[0].clusterSelector.matchLabels.env",
        /string/,
      ],
      [
        "targets that are not JSON",
        { targetsJson: "[{" },
        "bundle.targets",
        /not valid JSON/,
      ],
      [
        "a Helm customization of a bundle without helm",
        { customizations: [{ clusterName: "c-00", helm: { values: {} } }] },
        "bundle.targetCustomizations[0].helm",
        /needs a Helm bundle/,
      ],
      [
        "a bad rolloutStrategy",
        { strategy: { maxUnavailable: "abc" } },
        "bundle.rolloutStrategy.maxUnavailable",
        /./,
      ],
      [
        "a staged rollout on a hub that makes no staged runs",
        { updateStrategyName: "canary-first", rollout: "updateStrategyName" },
        "bundle.updateStrategyName",
        /this hub makes no staged runs of bundle revisions/,
      ],
      [
        "a manifest that is not YAML",
        {
          manifests: [
            {
              path: "deploy/app.yaml",
              yaml: Buffer.from("kind: x\nmetadata:\n  labels: [a\n"),
              content: "yaml",
            },
          ],
        },
        "bundle.manifests[0]",
        /^"deploy\/app.yaml" line 4: column 1: Flow sequence/,
      ],
      [
        "an object without a name",
        {
          manifests: [
            {
              path: "a.json",
              yaml: Buffer.from(
                `${configMap("1")}\n---\n{"apiVersion":"v1","kind":"Secret","metadata":{}}`,
              ),
              content: "yaml",
            },
          ],
        },
        "bundle.manifests[0]",
        /^"a.json" line 12: is not a Kubernetes object: metadata.name is missing/,
      ],
      [
        "a Helm chart",
        {
          manifests: [
            {
              path: "chart/Chart.yaml",
              yaml: Buffer.from("apiVersion: v2"),
              content: "yaml",
            },
          ],
        },
        "bundle.manifests[0]",
        /looks like a Helm chart given as plain manifests/,
      ],
      [
        "a reference to an object never uploaded",
        {
          manifests: [
            {
              path: "big.json",
              object: { digest: `sha256:${"a".repeat(64)}`, sizeBytes: 10 },
              content: "object",
            },
          ],
        },
        "bundle.manifests[0].object.digest",
        /upload it with PutObject first/,
      ],
    ];

  test.each(badSpecs)(
    "refuses %s with its field path and stores nothing",
    async (_what, overrides, path, message) => {
      await using h = await startHarness(clusters(2));
      await h.manager.apply(bundleSpec(), "create");
      await h.manager.idle();
      const before = await storedRecords(h);
      const intents = h.publisher.snapshot();
      const error = await refusal(
        h.manager.apply(bundleSpec({ version: "2", ...overrides }), "bad"),
      );
      expect(error.code).toBe("invalid_argument");
      const problem = error.problems.find((p) => p.path === path);
      expect(problem, JSON.stringify(error.problems)).toBeDefined();
      expect(problem?.message).toMatch(message);
      await h.manager.idle();
      expect(await storedRecords(h)).toEqual(before);
      expect(h.publisher.snapshot()).toEqual(intents);
    },
  );

  test("reports every problem of a request at once", async () => {
    await using h = await startHarness();
    const error = await refusal(
      h.manager.apply(
        bundleSpec({
          name: "",
          defaultNamespace: "Bad",
          targets: [{ clusterSelecter: {} }],
        }),
        "bad",
      ),
    );
    expect(error.problems.map((p) => p.path).sort()).toEqual([
      "bundle.defaultNamespace",
      "bundle.name",
      "bundle.targets[0].clusterSelecter",
    ]);
    expect(await storedRecords(h)).toEqual([]);
  });

  test("renders one content per customization namespace; each cluster gets its own digest", async () => {
    await using h = await startHarness([
      cluster("eu-1", { region: "eu" }),
      cluster("us-1", { region: "us" }),
    ]);
    const { bundle } = await h.manager.apply(
      bundleSpec({
        customizations: [
          { clusterSelector: "region=eu", defaultNamespace: "web-eu" },
        ],
      }),
      "create",
    );
    await h.manager.idle();
    const snapshot = h.publisher.snapshot();
    const eu = snapshot.get("eu-1")?.intent.bundles["web"];
    const us = snapshot.get("us-1")?.intent.bundles["web"];
    expect(eu?.revision).toBe(bundle.record.revision);
    expect(us?.revision).toBe(bundle.record.revision);
    expect(eu?.digest).not.toBe(us?.digest);
    const contentOf = (digest: string | undefined) => {
      const parsed = parseBundleContent(
        h.publisher.bundleContent(digest ?? "") ?? new Uint8Array(),
      );
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
      return parsed.value;
    };
    expect(contentOf(eu?.digest)).toMatchObject({
      bundle: "web",
      namespace: "web-eu",
      revision: bundle.record.revision,
    });
    expect(contentOf(us?.digest).namespace).toBe("web");
    expect(contentOf(us?.digest).resources).toEqual([
      JSON.parse(configMap("1")),
    ]);
  });

  test("takes manifests uploaded earlier by reference, and a list of documents", async () => {
    await using h = await startHarness(clusters(1));
    const text = `${configMap("1", "a")}\n---\n# second\n${configMap("1", "b")}\n---\n{"apiVersion":"v1","kind":"List","items":[${configMap("1", "c")}]}\n`;
    const bytes = Buffer.from(text);
    const digest = await h.publisher.putBundleContent(bytes);
    const { bundle } = await h.manager.apply(
      bundleSpec({
        manifests: [
          {
            path: "all.json",
            object: { digest, sizeBytes: bytes.byteLength },
            content: "object",
          },
        ],
      }),
      "by reference",
    );
    expect(bundle.record.manifests).toEqual([
      { path: "all.json", digest, sizeBytes: bytes.byteLength },
    ]);
    await h.manager.idle();
    const intent = h.publisher.snapshot().get("c-00")?.intent.bundles["web"];
    const content = parseBundleContent(
      h.publisher.bundleContent(intent?.digest ?? "") ?? new Uint8Array(),
    );
    expect(
      content.ok && content.value.resources.map((r) => r.metadata.name),
    ).toEqual(["a", "b", "c"]);
  });

  test("a restarted manager loads stored bundles and reads released revisions from intents", async () => {
    await using h = await startHarness(clusters(3));
    const { bundle } = await h.manager.apply(bundleSpec(), "create");
    await h.manager.idle();
    await h.manager.stop();
    const restarted = await h.restart();
    await restarted.idle();
    const status = await restarted.get("web");
    expect(status.summary.record.revision).toBe(bundle.record.revision);
    // Reports were in memory: until agents re-send them, released clusters wait for Applied.
    expect(
      status.clusters.map((c) => [c.cluster, c.state, c.releasedRevision]),
    ).toEqual([
      ["c-00", "WaitApplied", bundle.record.revision],
      ["c-01", "WaitApplied", bundle.record.revision],
      ["c-02", "WaitApplied", bundle.record.revision],
    ]);
    expect(holding(h, bundle.record.revision)).toHaveLength(3);
    expect((await restarted.list()).map((b) => b.counts.waitApplied)).toEqual([
      3,
    ]);
  });
});
