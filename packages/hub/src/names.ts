/**
 * Names of objects operators create (cluster groups, strategies, runs, bundles): DNS labels, as in
 * Kubernetes, so they are valid state keys, subjects and label values everywhere.
 */
import { isDnsLabel, type Problem } from "@flotilla/core";

/** Why `name` cannot name an object, as a problem at `path`, or undefined. */
export function nameProblem(name: unknown, path: string): Problem | undefined {
  if (typeof name !== "string" || name === "") {
    return { path, message: "is required", value: name };
  }
  if (!isDnsLabel(name)) {
    return {
      path,
      message:
        "must be a DNS label: at most 63 lower-case letters, digits and '-', starting and ending alphanumeric",
      value: name,
    };
  }
  return undefined;
}
