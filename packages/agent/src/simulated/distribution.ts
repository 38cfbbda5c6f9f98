/**
 * Durations of simulated work (time to ready, apply and upgrade durations): fixed, or drawn from a
 * small set of distributions with injected randomness. Written in config as one key:
 * `{fixedSeconds: 5}`, `{uniform: {minSeconds, maxSeconds}}`,
 * `{normal: {meanSeconds, stddevSeconds, minSeconds?}}`, `{exponential: {meanSeconds, minSeconds?}}`.
 */
import { z } from "zod";
import type { Random } from "./random.js";

/** A duration distribution, normalised. */
export type Distribution =
  | { readonly type: "Fixed"; readonly seconds: number }
  | {
      readonly type: "Uniform";
      readonly minSeconds: number;
      readonly maxSeconds: number;
    }
  | {
      readonly type: "Normal";
      readonly meanSeconds: number;
      readonly stddevSeconds: number;
      /** Draws below are raised to it (default 0): durations are never negative. */
      readonly minSeconds: number;
    }
  | {
      readonly type: "Exponential";
      /** Mean of the exponential part, added to `minSeconds`. */
      readonly meanSeconds: number;
      readonly minSeconds: number;
    };

/** A fixed duration. */
export function fixedSeconds(seconds: number): Distribution {
  return { type: "Fixed", seconds };
}

const seconds = z.number().min(0).max(31_536_000);
const FORMS = ["fixedSeconds", "uniform", "normal", "exponential"] as const;

/** The config field of a distribution. */
export const distributionField = z
  .strictObject({
    fixedSeconds: seconds.optional(),
    uniform: z
      .strictObject({ minSeconds: seconds, maxSeconds: seconds })
      .refine((u) => u.maxSeconds >= u.minSeconds, {
        error: "must not be below minSeconds",
        path: ["maxSeconds"],
      })
      .optional(),
    normal: z
      .strictObject({
        meanSeconds: seconds,
        stddevSeconds: seconds,
        minSeconds: seconds.optional(),
      })
      .optional(),
    exponential: z
      .strictObject({
        meanSeconds: seconds.refine((s) => s > 0, "must be above 0"),
        minSeconds: seconds.optional(),
      })
      .optional(),
  })
  .superRefine((d, ctx) => {
    const set = FORMS.filter((k) => d[k] !== undefined);
    if (set.length !== 1)
      ctx.addIssue({
        code: "custom",
        message: `must set exactly one of ${FORMS.join(", ")}`,
        input: d,
      });
  })
  .transform((d): Distribution => {
    if (d.uniform !== undefined) return { type: "Uniform", ...d.uniform };
    if (d.normal !== undefined)
      return { type: "Normal", minSeconds: 0, ...d.normal };
    if (d.exponential !== undefined)
      return { type: "Exponential", minSeconds: 0, ...d.exponential };
    return fixedSeconds(d.fixedSeconds ?? 0);
  });

/** One draw from `d`, in whole milliseconds; uses `random` 0 (Fixed), 1 or 2 (Normal) times. */
export function sampleMs(d: Distribution, random: Random): number {
  let s: number;
  switch (d.type) {
    case "Fixed":
      s = d.seconds;
      break;
    case "Uniform":
      s = d.minSeconds + random() * (d.maxSeconds - d.minSeconds);
      break;
    case "Normal": {
      // Box–Muller; 1 - u keeps the logarithm's argument in (0, 1].
      const u1 = 1 - random();
      const u2 = random();
      const z0 = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
      s = Math.max(d.minSeconds, d.meanSeconds + z0 * d.stddevSeconds);
      break;
    }
    case "Exponential":
      s = d.minSeconds - d.meanSeconds * Math.log(1 - random());
      break;
    default: {
      const unreachable: never = d;
      return unreachable;
    }
  }
  return Math.round(s * 1000);
}
