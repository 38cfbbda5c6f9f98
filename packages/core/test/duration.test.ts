/** Durations as written in flags and config (`parseDuration`). */
import { describe, expect, it } from "vitest";
import { parseDuration } from "../src/index.js";

describe("parseDuration", () => {
  it.each([
    ["500ms", 500],
    ["30s", 30_000],
    ["1h30m", 5_400_000],
    ["2d", 172_800_000],
    ["1.5h", 5_400_000],
  ])("reads %s as %d ms", (text, ms) => {
    expect(parseDuration(text)).toEqual({ ok: true, value: ms });
  });

  it.each(["", "10", "1x", "h", "1h 30m", "-5s"])("refuses %j", (text) => {
    expect(parseDuration(text).ok).toBe(false);
  });

  it("says what is wrong in one problem without a path", () => {
    expect(parseDuration("10")).toEqual({
      ok: false,
      problems: [{ path: "", message: 'needs a unit, e.g. "10s" or "10m"' }],
    });
    expect(parseDuration("1x")).toEqual({
      ok: false,
      problems: [
        { path: "", message: "must be a duration like 30s, 10m, 1h30m or 2d" },
      ],
    });
  });
});
