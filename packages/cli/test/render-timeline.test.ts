import { describe, expect, it } from "vitest";
import type { TimelineEntry } from "../src/render/preview-types.js";
import { foldTimeline, renderTimeline } from "../src/render/timeline.js";
import { names, plainOptions } from "./fixtures.js";

const T0 = "2026-03-02T09:00:00Z";
const T1 = "2026-03-02T09:02:00Z";

function released(cluster: string, at: string, group = "prod"): TimelineEntry {
  return {
    at,
    type: "released",
    cluster,
    wave: "prod",
    group,
    message: "Released revision 2 (update)",
  };
}

function member(
  type: string,
  cluster: string,
  at: string,
  group = "prod",
): TimelineEntry {
  const message = type.charAt(0).toUpperCase() + type.slice(1);
  return { at, type, cluster, wave: "prod", group, message };
}

const clustersOf = (
  rows: ReturnType<typeof foldTimeline>,
): (readonly string[] | null)[] =>
  rows.map((r) => (r.kind === "members" ? r.clusters : null));

describe("foldTimeline", () => {
  it("folds consecutive releases at the same instant in the same group into one row", () => {
    const rows = foldTimeline([
      released("a", T0),
      released("b", T0),
      released("c", T0),
    ]);
    expect(clustersOf(rows)).toEqual([["a", "b", "c"]]);
  });

  it("starts a new row at a new instant", () => {
    const rows = foldTimeline([
      released("a", T0),
      released("b", T0),
      released("c", T1),
      released("d", T1),
    ]);
    expect(clustersOf(rows)).toEqual([
      ["a", "b"],
      ["c", "d"],
    ]);
  });

  it("keeps one row per group when groups of a stage start members at the same instant", () => {
    const rows = foldTimeline([
      member("started", "a", T0, "eu"),
      member("started", "x", T0, "us"),
      member("started", "b", T0, "eu"),
      member("started", "y", T0, "us"),
    ]);
    expect(
      rows.map((r) =>
        r.kind === "members" ? [r.entry.group, r.clusters] : null,
      ),
    ).toEqual([
      ["eu", ["a", "b"]],
      ["us", ["x", "y"]],
    ]);
  });

  it("separates interleaved successes and starts at one instant into a row each, successes first", () => {
    const rows = foldTimeline([
      member("succeeded", "a", T0),
      member("started", "c", T0),
      member("succeeded", "b", T0),
      member("started", "d", T0),
    ]);
    expect(
      rows.map((r) => [r.entry.type, r.kind === "members" ? r.clusters : []]),
    ).toEqual([
      ["succeeded", ["a", "b"]],
      ["started", ["c", "d"]],
    ]);
  });

  it("keeps member entries with different messages apart", () => {
    const closed = (cluster: string, until: string): TimelineEntry => ({
      ...member("pending", cluster, T0),
      message: `Maintenance window closed until ${until}`,
    });
    const rows = foldTimeline([
      closed("a", "Sat"),
      closed("b", "Wed"),
      closed("c", "Sat"),
    ]);
    expect(clustersOf(rows)).toEqual([["a", "c"], ["b"]]);
  });

  it("does not fold across an entry that is not about a member, so cause and effect stay in order", () => {
    const stage: TimelineEntry = {
      at: T0,
      type: "stage",
      wave: "prod",
      message: "Started",
    };
    const rows = foldTimeline([released("a", T0), stage, released("b", T0)]);
    expect(rows.map((r) => r.kind)).toEqual(["members", "entry", "members"]);
  });
});

describe("renderTimeline", () => {
  it("prints offset from the start, type, scope and message in aligned columns", () => {
    const lines = renderTimeline(
      [
        { at: T0, type: "run", message: "Started by simulation" },
        { at: T0, type: "stage", wave: "canary", message: "Started" },
        {
          at: "2026-03-02T10:02:00Z",
          type: "gate",
          wave: "canary",
          gate: "stage:canary:after",
          message: "Waiting for approval",
        },
      ],
      T0,
      plainOptions(),
    );
    expect(lines).toEqual([
      "  +0m     run            Started by simulation",
      "  +0m     stage  canary  Started",
      "  +1h02m  gate   canary  Waiting for approval",
    ]);
  });

  it("lists a batch's clusters, leaving out a message that only repeats the type", () => {
    const lines = renderTimeline(
      names("c", 3).map((c) => member("started", c, T0, "canary")),
      T0,
      plainOptions(),
    );
    expect(lines).toEqual(["  +0m  started  canary  c-001, c-002, c-003"]);
  });

  it("puts a message that says more in front of the clusters", () => {
    const lines = renderTimeline(
      [released("a", T0), released("b", T0)],
      T0,
      plainOptions(),
    );
    expect(lines).toEqual([
      "  +0m  released  prod  Released revision 2 (update): a, b",
    ]);
  });

  it("wraps a large batch under the text column and truncates it unless --all", () => {
    const batch = names("c", 60).map((c) => member("started", c, T0));
    const short = renderTimeline(batch, T0, plainOptions(60));
    expect(short).toHaveLength(4);
    expect(short[3]).toMatch(/^ {22}… and \d+ more$/);
    for (const line of short) expect(line.length).toBeLessThanOrEqual(60);
    const all = renderTimeline(batch, T0, plainOptions(60, true)).join("\n");
    expect(all).toContain("c-060");
    expect(all).not.toContain("more");
  });

  it("wraps long messages under the text column", () => {
    const long =
      "Maintenance window for kubernetes closed until 2026-03-07T21:00:00Z, next opening Saturday";
    const lines = renderTimeline(
      [{ at: T0, type: "group", group: "prod-eu", message: long }],
      T0,
      plainOptions(60),
    );
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
    expect(lines[1]).toMatch(/^ {23}\S/);
  });
});
