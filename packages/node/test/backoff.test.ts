import { backoffCeilingMs, createBackoff, halfJitter } from "@flotilla/node";
import { describe, expect, it } from "vitest";

describe("backoffCeilingMs", () => {
  it("doubles the initial delay after every failure, up to the maximum", () => {
    expect(
      [0, 1, 2, 3, 4, 5].map((n) => backoffCeilingMs(n, 100, 1_000)),
    ).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it("stays at the maximum long after 2 ** failures overflows", () => {
    expect(backoffCeilingMs(5_000, 500, 30_000)).toBe(30_000);
  });
});

describe("halfJitter", () => {
  it("scales the ceiling by a factor in [0.5, 1)", () => {
    expect(halfJitter(1_000, () => 0)).toBe(500);
    expect(halfJitter(1_000, () => 0.5)).toBe(750);
    expect(halfJitter(1_000, () => 0.999)).toBeLessThan(1_000);
  });
});

describe("createBackoff", () => {
  it("defaults to 500 ms doubling to 8 s, each delay exactly the ceiling at a middle draw", () => {
    const backoff = createBackoff({ random: () => 0.5 });
    const delays = Array.from({ length: 7 }, () => backoff.next());
    expect(delays).toEqual([500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    expect(backoff.attempts).toBe(7);
  });

  it("spreads delays by ±jitter of the ceiling", () => {
    const low = createBackoff({
      initialMs: 1_000,
      jitter: 0.5,
      random: () => 0,
    });
    const high = createBackoff({
      initialMs: 1_000,
      jitter: 0.5,
      random: () => 1,
    });
    expect(low.next()).toBe(500);
    expect(high.next()).toBe(1_500);
  });

  it("starts again from the initial delay after reset", () => {
    const backoff = createBackoff({
      random: () => 0.5,
      initialMs: 10,
      maxMs: 100,
    });
    backoff.next();
    backoff.next();
    backoff.reset();
    expect(backoff.attempts).toBe(0);
    expect(backoff.next()).toBe(10);
  });
});
