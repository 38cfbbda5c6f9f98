/**
 * Checks on the hub's answers. proto3 cannot make a message field required, so a response whose
 * main message is missing is a broken hub, reported as such rather than printed as nothing.
 */
import { FlotillaError } from "@flotilla/core";

/** `value`, or an `internal` error saying the hub's answer lacks `what`. */
export function present<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined)
    throw new FlotillaError("internal", `The hub's answer has no ${what}`);
  return value;
}
