// fleet.yaml correctDrift (docs/semantics.md#drift-correction) travels in each target's intent and
// keeps the revision; namespaceLabels/namespaceAnnotations
// (docs/bundles.md#namespace-labels-and-annotations) are content: they change the revision and
// reach each cluster merged with its customization's.
import { describe, expect, test } from "vitest";
import { parseBundleContent } from "@flotilla/protocol";
import {
  bundleSpec,
  cluster,
  refusal,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

function entry(h: Harness, clusterName: string) {
  return h.publisher.snapshot().get(clusterName)?.intent.bundles["web"];
}

function contentOf(h: Harness, clusterName: string) {
  const parsed = parseBundleContent(
    h.publisher.bundleContent(entry(h, clusterName)?.digest ?? "") ??
      new Uint8Array(),
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

const members = () => [
  cluster("eu-1", { region: "eu" }),
  cluster("us-1", { region: "us" }),
  cluster("ap-1", { region: "ap" }),
];

describe("correctDrift", () => {
  test("reaches each target's intent, its customization's replacing the bundle's, without a new revision", async () => {
    await using h = await startHarness(members());
    const customizations = [
      { clusterSelector: "region=eu", correctDrift: { enabled: false } },
      {
        clusterSelector: "region=us",
        correctDrift: { enabled: true, force: true },
      },
    ];
    const first = await h.manager.apply(bundleSpec({ customizations }), "a");
    await h.manager.idle();
    const r1 = first.bundle.record.revision;
    expect(entry(h, "eu-1")).not.toHaveProperty("correctDrift");
    expect(entry(h, "us-1")?.correctDrift).toEqual({ force: true });
    expect(entry(h, "ap-1")).not.toHaveProperty("correctDrift");
    const generation = h.publisher.snapshot().get("ap-1")?.intent.generation;

    const second = await h.manager.apply(
      bundleSpec({
        customizations: customizations.map((c) => ({
          ...c,
          correctDrift: { enabled: true },
        })),
        correctDriftJson: JSON.stringify({ enabled: true }),
      }),
      "b",
    );
    await h.manager.idle();
    expect(second.bundle.record.revision).toBe(r1);
    expect(second.bundle.record.correctDriftJson).toBe('{"enabled":true}');
    for (const name of ["eu-1", "us-1", "ap-1"]) {
      expect(entry(h, name)).toMatchObject({
        revision: r1,
        correctDrift: { force: false },
      });
    }
    expect(h.publisher.snapshot().get("ap-1")?.intent.generation).toBe(
      (generation ?? 0) + 1,
    );
  });

  test("a boolean or a non-boolean field is refused with its path and value", async () => {
    await using h = await startHarness(members());
    const error = await refusal(
      h.manager.apply(bundleSpec({ correctDriftJson: "true" }), "a"),
    );
    expect(error.problems).toEqual([
      expect.objectContaining({ path: "bundle.correctDrift", value: true }),
    ]);
    const nested = await refusal(
      h.manager.apply(
        bundleSpec({ correctDriftJson: '{"enabled":"yes"}' }),
        "a",
      ),
    );
    expect(nested.problems).toEqual([
      expect.objectContaining({
        path: "bundle.correctDrift.enabled",
        value: "yes",
      }),
    ]);
  });
});

describe("namespaceLabels and namespaceAnnotations", () => {
  test("are content: merged per customization, and a change makes a new revision", async () => {
    await using h = await startHarness(members());
    const spec = (team: string) =>
      bundleSpec({
        namespaceLabelsJson: JSON.stringify({ team, tier: "front" }),
        namespaceAnnotationsJson: JSON.stringify({ "example.com/owner": "x" }),
        customizations: [
          { clusterSelector: "region=eu", namespaceLabels: { tier: "edge" } },
        ],
      });
    const first = await h.manager.apply(spec("web"), "a");
    await h.manager.idle();
    expect(contentOf(h, "eu-1")).toMatchObject({
      namespace: "web",
      namespaceLabels: { team: "web", tier: "edge" },
      namespaceAnnotations: { "example.com/owner": "x" },
    });
    expect(contentOf(h, "us-1")).toMatchObject({
      namespaceLabels: { team: "web", tier: "front" },
    });
    const second = await h.manager.apply(spec("shop"), "b");
    expect(second.bundle.record.revision).not.toBe(
      first.bundle.record.revision,
    );
  });

  test("a label that Kubernetes refuses is refused with its path", async () => {
    await using h = await startHarness(members());
    const error = await refusal(
      h.manager.apply(
        bundleSpec({
          customizations: [
            { clusterName: "eu-1", namespaceLabels: { team: "a b" } },
          ],
        }),
        "a",
      ),
    );
    expect(error.problems).toEqual([
      expect.objectContaining({
        path: "bundle.targetCustomizations[0].namespaceLabels.team",
        value: "a b",
      }),
    ]);
  });
});
