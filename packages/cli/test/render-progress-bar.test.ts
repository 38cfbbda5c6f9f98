import { describe, expect, it } from "vitest";
import { progressBar } from "../src/render/progress-bar.js";

describe("progressBar", () => {
  it("fills cells in proportion to done/total", () => {
    expect(progressBar(40, 60, 15)).toBe(`[${"█".repeat(10)}${"░".repeat(5)}]`);
  });

  it("is empty at zero and full only when everything is done", () => {
    expect(progressBar(0, 10, 10)).toBe(`[${"░".repeat(10)}]`);
    expect(progressBar(59, 60, 10)).toBe(`[${"█".repeat(9)}░]`);
    expect(progressBar(60, 60, 10)).toBe(`[${"█".repeat(10)}]`);
  });

  it("shows one cell for any progress so a small start is visible", () => {
    expect(progressBar(1, 1000, 10)).toBe(`[█${"░".repeat(9)}]`);
  });

  it("draws an empty bar for an empty wave instead of dividing by zero", () => {
    expect(progressBar(0, 0, 4)).toBe("[░░░░]");
  });
});
