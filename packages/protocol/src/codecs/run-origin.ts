/**
 * The auto-upgrade profile a run was made from (core's RunOrigin) ↔ `RunOrigin` on the wire
 * (docs/engine.md#auto-upgrade-profiles).
 */
import type { Problem, RunOrigin } from "@flotilla/core";
import type * as wire from "../generated/index.js";

/** Encodes a run's origin; absent for runs an operator created. */
export function runOriginToWire(origin: RunOrigin | undefined): {
  origin?: wire.RunOrigin;
} {
  return origin === undefined ? {} : { origin: { ...origin } };
}

/** Decodes a run's origin; an unknown `createdBy` is a problem at `path.createdBy`. */
export function runOriginFromWire(
  raw: wire.RunOrigin__Output | null | undefined,
  path: string,
  problems: Problem[],
): { origin?: RunOrigin } {
  if (raw === null || raw === undefined) return {};
  const { createdBy } = raw;
  if (createdBy !== "hub" && createdBy !== "generate") {
    problems.push({
      path: `${path}.createdBy`,
      message: 'must be "hub" or "generate"',
      value: createdBy,
    });
    return {};
  }
  return {
    origin: {
      profile: raw.profile,
      channel: raw.channel,
      target: raw.target,
      createdBy,
    },
  };
}
