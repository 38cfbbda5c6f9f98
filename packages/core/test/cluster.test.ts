import { describe, expect, it } from "vitest";
import {
  groupsOfCluster,
  parseClusterGroups,
  parseClusters,
} from "../src/cluster.js";

describe("clusters file", () => {
  it("accepts a bare list or {clusters: [...]}, fills defaults and drops a leading v from versions", () => {
    const raw = [{ name: "c-1", kubernetesVersion: "v1.30.5" }];
    const a = parseClusters(raw);
    const b = parseClusters({ clusters: raw });
    expect(a).toEqual(b);
    expect(a.ok && a.value[0]).toEqual({
      name: "c-1",
      labels: {},
      groups: [],
      nodePools: [],
      kubernetesVersion: "1.30.5",
    });
  });

  it("reports every problem at once: unknown fields with a suggestion, bad names and duplicates", () => {
    const result = parseClusters([
      { name: "a-1", regon: "eu" },
      { name: "A_2" },
      { name: "a-1" },
    ]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => p.path)).toEqual([
      "[0].regon",
      "[1].name",
      "[2].name",
    ]);
    expect(result.problems[0]?.message).toBe(
      'unknown field; did you mean "region"?',
    );
    expect(result.problems[2]).toEqual({
      path: "[2].name",
      message: "duplicate name; first defined at [0].name",
      value: "a-1",
    });
  });

  it("rejects labels that are not valid Kubernetes labels, with the label's path", () => {
    const result = parseClusters([{ name: "c", labels: { "bad key!": "x" } }]);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems[0]?.path).toContain("labels");
  });
});

describe("cluster groups", () => {
  it("a cluster belongs to a group it lists or whose selector matches its labels", () => {
    const groups = parseClusterGroups([
      { name: "eu", selector: { matchLabels: { region: "eu" } } },
      { name: "listed" },
      { name: "us", selector: { matchLabels: { region: "us" } } },
    ]);
    const clusters = parseClusters([
      { name: "c", labels: { region: "eu" }, groups: ["listed"] },
    ]);
    expect(groups.ok && clusters.ok).toBe(true);
    if (!groups.ok || !clusters.ok) return;
    expect(
      groupsOfCluster(clusters.value[0]!, groups.value).map((g) => g.name),
    ).toEqual(["eu", "listed"]);
  });

  it("rejects duplicate group names together with schema problems", () => {
    const result = parseClusterGroups([
      { name: "g", selector: { matchLabels: { a: 1 } } },
      { name: "g" },
    ]);
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.problems.map((p) => p.path)).toEqual([
        "[0].selector.matchLabels.a",
        "[1].name",
      ]);
  });
});
