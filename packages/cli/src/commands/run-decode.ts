/**
 * Decoding the hub's run status with protocol's codec; a run this client cannot read (a newer hub's
 * enum values) is an error naming the fields, never a half-drawn tree.
 */
import { FlotillaError } from "@flotilla/core";
import { runFromWire, type RunView, type wire } from "@flotilla/protocol";
import { present } from "../hub/answer.js";

/** The run in `status`, decoded. */
export function decodeRun(
  status: wire.RunStatus__Output | null | undefined,
): RunView {
  const decoded = runFromWire(present(status, "run"));
  if (decoded.ok) return decoded.value;
  throw new FlotillaError(
    "internal",
    "The hub sent a run status this client cannot read (is the CLI older than the hub?)",
    {
      problems: decoded.problems,
    },
  );
}
