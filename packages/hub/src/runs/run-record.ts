/**
 * Runs as the hub stores them ("runs" collection): core's Run record as it is (plain JSON), with
 * the name of the strategy it was created from. Decoding checks the envelope only; the record was
 * written by this hub from core's own value.
 */
import type { Run } from "@flotilla/core";
import { z } from "zod";
import { defineCollection } from "../store/state-store.js";

/** A stored run. */
export interface RunRecord {
  readonly run: Run;
  /** The update strategy it was created from; absent for an inline or one-by-one strategy. */
  readonly strategyName?: string;
}

const envelope = z.object({
  run: z.looseObject({
    apiVersion: z.literal("flotilla.dev/v1"),
    name: z.string().min(1),
    state: z.string(),
    stages: z.array(z.unknown()),
    payload: z.looseObject({ kind: z.enum(["upgrade", "bundle"]) }),
  }),
  strategyName: z.string().optional(),
});

export const RUNS = defineCollection<RunRecord>("runs", (value) => {
  envelope.parse(value);
  return value as RunRecord;
});

/** The record of `run`. */
export function runRecord(
  run: Run,
  strategyName: string | undefined,
): RunRecord {
  return strategyName === undefined ? { run } : { run, strategyName };
}
