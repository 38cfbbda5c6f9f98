import { describe, expect, it } from "vitest";
import { labelledList, wrapList } from "../src/render/wrap.js";
import { names } from "./fixtures.js";

describe("wrapList", () => {
  it("keeps a short list on one line", () => {
    expect(wrapList(["a", "b", "c"], { width: 80 })).toEqual(["a, b, c"]);
  });

  it("wraps at the width without splitting names and never exceeds it", () => {
    const lines = wrapList(names("c", 30), { width: 30 });
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(30);
    expect(lines.join(" ").split(/,? /)).toEqual(names("c", 30));
  });

  it("truncates after maxLines with the number of names not shown", () => {
    const lines = wrapList(names("c", 100), { width: 30, maxLines: 2 });
    expect(lines).toHaveLength(3);
    const shown = lines
      .slice(0, 2)
      .join(" ")
      .split(/,? /)
      .filter((s) => s !== "").length;
    expect(lines[2]).toBe(`… and ${String(100 - shown)} more`);
  });

  it("does not truncate a list that fits in maxLines", () => {
    expect(wrapList(names("c", 3), { width: 80, maxLines: 1 })).toEqual([
      "c-001, c-002, c-003",
    ]);
  });

  it("puts a name longer than the width on a line of its own", () => {
    expect(wrapList(["a", "x".repeat(20), "b"], { width: 10 })).toEqual([
      "a,",
      `${"x".repeat(20)},`,
      "b",
    ]);
  });
});

describe("labelledList", () => {
  it("starts after the label and indents continuation lines", () => {
    const lines = labelledList("Unassigned (6): ", names("x", 6), {
      width: 30,
    });
    expect(lines[0]?.startsWith("Unassigned (6): x-001")).toBe(true);
    expect(lines.slice(1).every((l) => l.startsWith("  x-"))).toBe(true);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(30);
  });
});
