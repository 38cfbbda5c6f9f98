import { describe, expect, it } from "vitest";
import { renderPlan } from "../src/render/plan-table.js";
import { createStyle } from "../src/render/style.js";
import { fleetPlan, plainOptions, stagedPlan } from "./fixtures.js";

describe("renderPlan for a staged run", () => {
  const text = renderPlan(stagedPlan, plainOptions());
  const lines = text.split("\n");

  it("summarises stages, groups and clusters in the headline", () => {
    expect(lines[0]).toBe(
      "Plan: staged update run, 3 stages, 4 groups, 59 clusters",
    );
  });

  it("draws stages → groups → clusters with resolved limits", () => {
    const wide = renderPlan(stagedPlan, plainOptions(120));
    expect(wide.split("\n").slice(1, 4)).toEqual([
      "├─ stage canary  3 clusters · maxConcurrency 2 · maxAllowedFailures 0 (fail-fast)",
      "│  └─ group canary  3 clusters · maxConcurrency 1 · maxAllowedFailures 0 (fail-fast)",
      "│     c-001, c-002, c-003",
    ]);
    expect(wide).toContain(
      "└─ stage prod  40 clusters · maxConcurrency 10 · maxAllowedFailures none (no limit of its own)",
    );
    expect(wide).toContain(
      "   ├─ group prod-eu  20 clusters · maxConcurrency 5 · maxAllowedFailures 5",
    );
  });

  it("names the label that orders a stage's members", () => {
    const [first, ...rest] = stagedPlan.waves;
    if (first === undefined) throw new Error("no wave");
    const plan = {
      ...stagedPlan,
      waves: [{ ...first, sortingLabelKey: "rollout-order" }, ...rest],
    };
    expect(renderPlan(plan, plainOptions(120)).split("\n")[1]).toBe(
      "├─ stage canary  3 clusters · maxConcurrency 2 · maxAllowedFailures 0 (fail-fast) · ordered by label rollout-order",
    );
  });

  it("renders a null failure budget as no limit of its own", () => {
    expect(renderPlan(stagedPlan, plainOptions(120))).toContain(
      "group staging  16 clusters · maxConcurrency 4 · maxAllowedFailures none (no limit of its own)",
    );
  });

  it("wraps a long limits line under its first fact, keeping the line to the children", () => {
    expect(lines.slice(1, 5)).toEqual([
      "├─ stage canary  3 clusters · maxConcurrency 2",
      "│  │             maxAllowedFailures 0 (fail-fast)",
      "│  └─ group canary  3 clusters · maxConcurrency 1",
      "│                   maxAllowedFailures 0 (fail-fast)",
    ]);
  });

  it("truncates long groups with the number of hidden clusters, and lists all with --all", () => {
    const narrow = renderPlan(stagedPlan, plainOptions(30));
    expect(narrow).toMatch(/\n {3}│ {2}… and \d+ more\n/);
    const all = renderPlan(stagedPlan, plainOptions(80, true));
    expect(all).not.toContain("more");
    expect(all).toContain("p-040");
  });

  it("wraps cluster lists within the width", () => {
    const listLines = renderPlan(stagedPlan, plainOptions(50, true))
      .split("\n")
      .filter((line) => /[│ ] +[a-z]-\d{3}/.test(line));
    expect(listLines.length).toBeGreaterThan(8);
    for (const line of listLines) expect(line.length).toBeLessThanOrEqual(50);
  });

  it("lists unassigned clusters and omits empty sections", () => {
    expect(text).toContain("Unassigned (2): lab-001, lab-002");
    expect(text).not.toContain("Limits:");
    expect(text).not.toContain("Warnings:");
  });
});

describe("renderPlan for a Fleet rollout", () => {
  const text = renderPlan(fleetPlan, plainOptions());

  it("shows partitions with their clusters directly, without a group level", () => {
    expect(text.split("\n").slice(0, 3)).toEqual([
      "Plan: Fleet rollout, 2 partitions, 44 clusters",
      "├─ partition canary  4 clusters · maxUnavailable 1",
      "│  c-001, c-002, c-003, c-004",
    ]);
    expect(text).not.toContain("group");
  });

  it("shows the bundle-wide limits and the warnings with their codes", () => {
    expect(text).toContain(
      [
        "Limits: maxUnavailable 44 (bundle-wide)",
        "        maxUnavailablePartitions 0 (each partition Ready before the next)",
        "        maxNew 50 (per pass)",
      ].join("\n"),
    );
    const wide = renderPlan(fleetPlan, plainOptions(200));
    expect(wide).toContain(
      "Limits: maxUnavailable 44 (bundle-wide) · maxUnavailablePartitions 0 (each partition Ready before the next) · maxNew 50 (per pass)\n",
    );
    expect(text).toContain(
      "Warnings:\n  ! maxUnavailable 100%: partitions never gate (MaxUnavailableDisablesGates)\n",
    );
  });

  it("uses colour only when the style enables it", () => {
    expect(text).not.toContain("\u001b[");
    const coloured = renderPlan(fleetPlan, {
      ...plainOptions(),
      style: createStyle(true),
    });
    expect(coloured).toContain("\u001b[");
  });
});
