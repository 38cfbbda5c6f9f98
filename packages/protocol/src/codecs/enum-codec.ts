/**
 * Two-way maps between the domain's enum spellings (`"NotStarted"`) and the wire's prefixed names
 * (`"RUN_STATE_NOT_STARTED"`). The table is typed `Record<Domain, Wire>`, so a domain value added
 * in core without a wire name fails to compile here.
 */
import type { Problem } from "@flotilla/core";
import { z } from "zod";

/** A domain ↔ wire enum mapping. */
export interface EnumCodec<D extends string, W extends string> {
  /** The domain values, in table order. */
  readonly values: readonly D[];
  toWire(value: D): W;
  /** The domain value, or undefined for UNSPECIFIED, unknown names and raw numbers. */
  fromWire(value: unknown): D | undefined;
  /** Like {@link fromWire}, but records a problem at `path` (and returns `fallback`) when unknown. */
  decode(value: unknown, path: string, problems: Problem[], fallback: D): D;
  /** A zod field accepting the wire names and producing the domain value. */
  readonly field: z.ZodType<D>;
}

/** Builds an {@link EnumCodec} from a complete domain → wire table. */
export function enumCodec<D extends string, W extends string>(
  table: Readonly<Record<D, W>>,
): EnumCodec<D, W> {
  const entries = Object.entries(table) as [D, W][];
  const reverse = new Map<unknown, D>(entries.map(([d, w]) => [w, d]));
  const values = entries.map(([d]) => d);
  const names = entries.map(([, w]) => w);
  const expected = `must be one of ${names.join(", ")}`;
  const fromWire = (value: unknown): D | undefined => reverse.get(value);
  return {
    values,
    toWire: (value) => table[value],
    fromWire,
    decode(value, path, problems, fallback) {
      const decoded = fromWire(value);
      if (decoded !== undefined) return decoded;
      problems.push({ path, message: expected, value });
      return fallback;
    },
    field: z.unknown().transform((raw, ctx): D => {
      const decoded = fromWire(raw);
      if (decoded !== undefined) return decoded;
      ctx.addIssue({ code: "custom", message: expected, input: raw });
      return z.NEVER;
    }),
  };
}
