import { describe, expect, it } from "vitest";
import {
  formatDuration,
  formatOffset,
  secondsBetween,
} from "../src/render/duration.js";

describe("formatOffset", () => {
  it.each([
    [0, "+0m"],
    [45, "+45s"],
    [300, "+5m"],
    [305, "+5m05s"],
    [3600, "+1h00m"],
    [3720, "+1h02m"],
    [3725, "+1h02m05s"],
    [90_000, "+1d01h00m"],
    [-120, "-2m"],
  ])("renders %d seconds as %s", (seconds, text) => {
    expect(formatOffset(seconds)).toBe(text);
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0s"],
    [45, "45s"],
    [750, "12m 30s"],
    [6 * 3600 + 42 * 60, "6h 42m"],
    [6 * 3600 + 42 * 60 + 59, "6h 42m"],
    [2 * 86_400 + 3 * 3600, "2d 3h"],
    [14 * 86_400, "14d"],
  ])("renders %d seconds as %s", (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });
});

describe("secondsBetween", () => {
  it("measures ISO timestamps in seconds, across offsets", () => {
    expect(
      secondsBetween("2026-03-02T09:00:00Z", "2026-03-02T10:02:30+00:00"),
    ).toBe(3750);
    expect(
      secondsBetween("2026-03-02T09:00:00Z", "2026-03-02T10:00:00+01:00"),
    ).toBe(0);
  });
});
