/**
 * Runs as the hub stores them ("runs" collection): core's Run record as it is (plain JSON).
 * Decoding checks the envelope only; the record was written by this hub from core's own value.
 */
import type { Run } from "@flotilla/core";
import { z } from "zod";
import { defineCollection } from "../store/state-store.js";

const envelope = z.looseObject({
  apiVersion: z.literal("flotilla.dev/v1"),
  name: z.string().min(1),
  state: z.string(),
  stages: z.array(z.unknown()),
  payload: z.looseObject({ kind: z.enum(["upgrade", "bundle"]) }),
});

export const RUNS = defineCollection<Run>("runs", (value) => {
  envelope.parse(value);
  return value as Run;
});
