/**
 * The small messages of an agent's session: Hello (first on a stream) and Heartbeat. Decoded with
 * the same care as everything an agent sends. The cluster name in Hello is a claim: only the
 * insecure development mode believes it; with mTLS the hub compares it with the certificate's.
 */
import type { Result } from "@flotilla/core";
import { z } from "zod";
import { MAX_ID_LENGTH, MAX_NAME_LENGTH } from "../limits.js";
import { boundedString, dnsLabel, parseWire, wholeNumber } from "./validate.js";

/** A validated Hello. */
export interface Hello {
  readonly clusterName: string;
  readonly agentVersion: string;
  readonly protocolVersion: number;
  readonly lastAppliedGeneration: number;
}

/** A validated Heartbeat. */
export interface Heartbeat {
  readonly sentAtMs: number;
  readonly lastAppliedGeneration: number;
}

const helloSchema = z.object({
  clusterName: dnsLabel(MAX_NAME_LENGTH),
  agentVersion: boundedString(MAX_ID_LENGTH, 1),
  protocolVersion: wholeNumber(1, 0xffff_ffff),
  lastAppliedGeneration: wholeNumber(0),
});

const heartbeatSchema = z.object({
  sentAtMs: wholeNumber(1),
  lastAppliedGeneration: wholeNumber(0),
});

/** Decodes and validates a Hello; problem paths start at `path`. */
export function helloFromWire(raw: unknown, path = "hello"): Result<Hello> {
  return parseWire(helloSchema, raw, path);
}

/** Decodes and validates a Heartbeat; problem paths start at `path`. */
export function heartbeatFromWire(
  raw: unknown,
  path = "heartbeat",
): Result<Heartbeat> {
  return parseWire(heartbeatSchema, raw, path);
}
