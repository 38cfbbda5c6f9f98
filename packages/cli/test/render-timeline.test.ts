import { describe, expect, it } from "vitest";
import type { TimelineEntry } from "../src/render/preview-types.js";
import { foldTimeline, renderTimeline } from "../src/render/timeline.js";
import { names, plainOptions } from "./fixtures.js";

const T0 = "2026-03-02T09:00:00.000Z";
const T1 = "2026-03-02T09:02:00.000Z";

function released(cluster: string, at: string, wave = "prod", group = "prod"): TimelineEntry {
  return { at, type: "released", cluster, wave, group, message: `Released ${cluster}` };
}

describe("foldTimeline", () => {
  it("folds consecutive releases at the same instant in the same group into one batch", () => {
    const rows = foldTimeline([released("a", T0), released("b", T0), released("c", T0)]);
    expect(rows).toEqual([{ kind: "batch", at: T0, wave: "prod", group: "prod", clusters: ["a", "b", "c"] }]);
  });

  it("starts a new batch at a new instant", () => {
    const rows = foldTimeline([released("a", T0), released("b", T0), released("c", T1), released("d", T1)]);
    expect(rows.map((r) => (r.kind === "batch" ? r.clusters : []))).toEqual([["a", "b"], ["c", "d"]]);
  });

  it("keeps one batch per group when groups of a stage release at the same instant", () => {
    const rows = foldTimeline([
      released("a", T0, "prod", "eu"),
      released("x", T0, "prod", "us"),
      released("b", T0, "prod", "eu"),
      released("y", T0, "prod", "us"),
    ]);
    expect(rows.map((r) => (r.kind === "batch" ? [r.group, r.clusters] : null))).toEqual([
      ["eu", ["a", "b"]],
      ["us", ["x", "y"]],
    ]);
  });

  it("does not fold releases separated by another entry, and leaves a lone release as is", () => {
    const other: TimelineEntry = { at: T0, type: "memberSucceeded", cluster: "z", message: "z Succeeded" };
    const rows = foldTimeline([released("a", T0), other, released("b", T0)]);
    expect(rows.map((r) => r.kind)).toEqual(["entry", "entry", "entry"]);
  });
});

describe("renderTimeline", () => {
  it("prints the offset from the start, the type and the message in aligned columns", () => {
    const lines = renderTimeline(
      [
        { at: T0, type: "stageStarted", message: "Stage canary started" },
        { at: "2026-03-02T10:02:00.000Z", type: "gatePending", message: "Approval pending" },
      ],
      T0,
      plainOptions(),
    );
    expect(lines).toEqual(["  +0m     stageStarted  Stage canary started", "  +1h02m  gatePending   Approval pending"]);
  });

  it("lists a batch's clusters on one line with its size and scope so the batch is visible", () => {
    const lines = renderTimeline(names("c", 3).map((c) => released(c, T0, "canary", "canary")), T0, plainOptions());
    expect(lines).toEqual(["  +0m  released  3 clusters in canary: c-001, c-002, c-003"]);
  });

  it("wraps a large batch under the message column and truncates it unless --all", () => {
    const batch = names("c", 60).map((c) => released(c, T0));
    const short = renderTimeline(batch, T0, plainOptions(60));
    expect(short.length).toBe(4);
    expect(short[3]).toMatch(/^ {17}… and \d+ more$/);
    for (const line of short) expect(line.length).toBeLessThanOrEqual(60);
    const all = renderTimeline(batch, T0, plainOptions(60, true));
    expect(all.join("\n")).toContain("c-060");
    expect(all.join("\n")).not.toContain("more");
  });
});
