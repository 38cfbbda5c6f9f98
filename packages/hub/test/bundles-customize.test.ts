// Customizations with patches: each customization's clusters get content whose manifests carry its
// patches, uncustomized clusters the plain content, equal effective content one object, and a
// patch that names no object of the bundle is refused with its path.
import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { parseBundleContent } from "@flotilla/protocol";
import { BUNDLES } from "../src/bundles/bundle-record.js";
import {
  bundleSpec,
  cluster,
  configMap,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

function contentOf(h: Harness, clusterName: string) {
  const ref = h.publisher.snapshot().get(clusterName)?.intent.bundles["web"];
  const parsed = parseBundleContent(
    h.publisher.bundleContent(ref?.digest ?? "") ?? new Uint8Array(),
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return { digest: ref?.digest, content: parsed.value };
}

const patchApp = (data: Record<string, unknown>) => ({
  target: { kind: "ConfigMap", name: "app" },
  patch: { data },
});

describe("customization patches", () => {
  test("clusters of different customizations get their patched content; others the plain one", async () => {
    await using h = await startHarness([
      cluster("eu-1", { region: "eu" }),
      cluster("eu-2", { region: "eu" }),
      cluster("us-1", { region: "us" }),
      cluster("ap-1", { region: "ap" }),
      cluster("za-1", { region: "za" }),
    ]);
    const { bundle } = await h.manager.apply(
      bundleSpec({
        customizations: [
          {
            clusterSelector: "region=eu",
            patches: [patchApp({ region: "eu" })],
          },
          {
            clusterSelector: "region=us",
            defaultNamespace: "web-us",
            patches: [patchApp({ region: "us", version: null })],
          },
          // The same patch as the first: the same content object.
          {
            clusterSelector: "region=ap",
            patches: [patchApp({ region: "eu" })],
          },
        ],
      }),
      "create",
    );
    expect(Object.keys(bundle.record.contents).sort()).toEqual([
      "web",
      "web#c0",
      "web#c2",
      "web-us#c1",
    ]);
    await h.manager.idle();
    const eu1 = contentOf(h, "eu-1");
    const eu2 = contentOf(h, "eu-2");
    const us = contentOf(h, "us-1");
    const ap = contentOf(h, "ap-1");
    const plain = contentOf(h, "za-1");
    const base = JSON.parse(configMap("1")) as Record<string, unknown>;

    expect(eu1.content.resources).toEqual([
      { ...base, data: { version: "1", region: "eu" } },
    ]);
    expect(us.content).toMatchObject({ namespace: "web-us" });
    expect(us.content.resources).toEqual([{ ...base, data: { region: "us" } }]);
    expect(plain.content).toMatchObject({
      namespace: "web",
      resources: [base],
    });
    expect(plain.content.revision).toBe(bundle.record.revision);

    expect(eu1.digest).toBe(eu2.digest);
    expect(ap.digest).toBe(eu1.digest);
    expect(new Set([eu1.digest, us.digest, plain.digest]).size).toBe(3);
    expect(bundle.record.contents["web#c0"]).toBe(eu1.digest);
    expect(bundle.record.contents["web"]).toBe(plain.digest);
  });

  test("a customization without patches keeps the plain namespace key", async () => {
    await using h = await startHarness([cluster("eu-1", { region: "eu" })]);
    const { bundle } = await h.manager.apply(
      bundleSpec({
        customizations: [
          { clusterSelector: "region=eu", defaultNamespace: "web-eu" },
        ],
      }),
      "create",
    );
    expect(Object.keys(bundle.record.contents).sort()).toEqual([
      "web",
      "web-eu",
    ]);
  });

  test("a patch naming no object of the bundle is refused with its path; nothing is stored", async () => {
    await using h = await startHarness([cluster("eu-1", { region: "eu" })]);
    const error: unknown = await h.manager
      .apply(
        bundleSpec({
          customizations: [
            { clusterName: "x", patches: [patchApp({ a: "1" })] },
            {
              clusterSelector: "region=eu",
              patches: [
                patchApp({ a: "1" }),
                { target: { kind: "ConfigMap", name: "api" }, patch: {} },
              ],
            },
          ],
        }),
        "bad patch",
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(FlotillaError);
    const problems = (error as FlotillaError).problems;
    expect(problems.map((p) => p.path)).toEqual([
      "bundle.targetCustomizations[1].patches[1].target",
    ]);
    expect(await h.store.list(BUNDLES)).toEqual([]);
  });
});

describe("a cluster whose labels change after its release", () => {
  test("gets the content of its new customization at the same revision", async () => {
    await using h = await startHarness([cluster("a", { region: "us" })]);
    const { bundle } = await h.manager.apply(
      bundleSpec({
        customizations: [
          {
            clusterSelector: "region=eu",
            patches: [patchApp({ region: "eu" })],
          },
        ],
      }),
      "create",
    );
    await h.manager.idle();
    const before = contentOf(h, "a");
    expect(before.digest).toBe(bundle.record.contents["web"]);
    h.fleet.relabel("a", { region: "eu" });
    h.manager.onFleetChanged();
    await h.manager.idle();
    const after = contentOf(h, "a");
    expect(after.digest).toBe(bundle.record.contents["web#c0"]);
    expect(after.content.revision).toBe(bundle.record.revision);
    expect(after.content.resources[0]).toMatchObject({
      data: { region: "eu" },
    });
  });
});
