import {
  distributionField,
  mulberry32,
  sampleMs,
  seedFrom,
  type Distribution,
} from "@flotilla/agent/testing";
import { describe, expect, it } from "vitest";

const draws = (d: Distribution, seed: number, n = 50): number[] => {
  const random = mulberry32(seed);
  return Array.from({ length: n }, () => sampleMs(d, random));
};

const parse = (raw: unknown): Distribution => distributionField.parse(raw);

describe("randomness and distributions", () => {
  it("mulberry32 repeats for a seed and differs between seeds", () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const c = mulberry32(43);
    const seq = (r: () => number): number[] =>
      Array.from({ length: 5 }, () => r());
    const first = seq(a);
    expect(seq(b)).toEqual(first);
    expect(seq(c)).not.toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it("derives seeds from text, so a cluster's seed depends on its name only", () => {
    expect(seedFrom(7, "prod-01")).toBe(seedFrom(7, "prod-01"));
    expect(seedFrom(7, "prod-01")).not.toBe(seedFrom(7, "prod-02"));
    expect(seedFrom(7, "prod-01")).not.toBe(seedFrom(8, "prod-01"));
  });

  it.each([
    { uniform: { minSeconds: 2, maxSeconds: 9 } },
    { normal: { meanSeconds: 10, stddevSeconds: 3, minSeconds: 4 } },
    { exponential: { meanSeconds: 5, minSeconds: 1 } },
  ])("draws %j deterministically per seed", (raw) => {
    const d = parse(raw);
    expect(draws(d, 1)).toEqual(draws(d, 1));
    expect(draws(d, 1)).not.toEqual(draws(d, 2));
  });

  it("keeps every draw within the distribution's bounds", () => {
    const uniform = draws(
      parse({ uniform: { minSeconds: 2, maxSeconds: 9 } }),
      3,
      500,
    );
    expect(Math.min(...uniform)).toBeGreaterThanOrEqual(2000);
    expect(Math.max(...uniform)).toBeLessThanOrEqual(9000);
    const normal = draws(
      parse({ normal: { meanSeconds: 5, stddevSeconds: 10, minSeconds: 1 } }),
      3,
      500,
    );
    expect(Math.min(...normal)).toBe(1000);
    const exponential = draws(
      parse({ exponential: { meanSeconds: 5, minSeconds: 1 } }),
      3,
      2000,
    );
    expect(Math.min(...exponential)).toBeGreaterThanOrEqual(1000);
    const mean = exponential.reduce((s, x) => s + x, 0) / exponential.length;
    expect(mean).toBeGreaterThan(5000);
    expect(mean).toBeLessThan(7000);
  });

  it("uses no randomness for a fixed duration", () => {
    let calls = 0;
    const random = (): number => {
      calls++;
      return 0.5;
    };
    expect(sampleMs(parse({ fixedSeconds: 2.5 }), random)).toBe(2500);
    expect(calls).toBe(0);
  });

  it("refuses a distribution with two forms or a range upside down", () => {
    expect(
      distributionField.safeParse({
        fixedSeconds: 1,
        uniform: { minSeconds: 1, maxSeconds: 2 },
      }).success,
    ).toBe(false);
    const inverted = distributionField.safeParse({
      uniform: { minSeconds: 5, maxSeconds: 1 },
    });
    expect(inverted.success).toBe(false);
    expect(inverted.error?.issues[0]?.path).toEqual(["uniform", "maxSeconds"]);
  });
});
