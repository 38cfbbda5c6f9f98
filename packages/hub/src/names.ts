/**
 * Names of objects operators create (cluster groups, strategies, runs, bundles): DNS labels, as in
 * Kubernetes, so they are valid state keys, subjects and label values everywhere.
 */
import type { Problem } from "@flotilla/core";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Why `name` cannot name an object, as a problem at `path`, or undefined. */
export function nameProblem(name: unknown, path: string): Problem | undefined {
  if (typeof name !== "string" || name === "") {
    return { path, message: "is required", value: name };
  }
  if (name.length > 63 || !DNS_LABEL.test(name)) {
    return {
      path,
      message:
        "must be a DNS label: at most 63 lower-case letters, digits and '-', starting and ending alphanumeric",
      value: name,
    };
  }
  return undefined;
}
