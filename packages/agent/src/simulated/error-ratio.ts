/**
 * The error ratio a simulated cluster reports for a bundle's workload (docs/agent.md#simulated-error-ratio):
 * the annotation `simulated.flotilla.dev/error-ratio` on the bundle's objects says how badly the
 * revision behaves once applied, so that a demo or a test can make one revision "bad" by its
 * content alone, and a metric gate or a rollback can be rehearsed against a real Prometheus
 * scraping the agent's `/metrics`.
 */
import { showValue } from "@flotilla/core";
import type { Manifest } from "../kube/gateway.js";

/** The annotation that sets a revision's simulated error ratio. */
export const ERROR_RATIO_ANNOTATION = "simulated.flotilla.dev/error-ratio";

/** A decimal number, as an annotation value must be written. */
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

/**
 * The largest error ratio the objects' annotations give (undefined when none sets one), or the
 * problem with the first value that is not a number from 0 to 1, naming the object and the value.
 */
export function errorRatioOf(
  manifests: readonly Manifest[],
): { ratio: number | undefined } | { problem: string } {
  let ratio: number | undefined;
  for (const [index, manifest] of manifests.entries()) {
    const metadata = manifest.metadata as
      { annotations?: Readonly<Record<string, unknown>> } | undefined;
    const value = metadata?.annotations?.[ERROR_RATIO_ANNOTATION];
    if (value === undefined) continue;
    const parsed =
      typeof value === "string" && DECIMAL.test(value.trim())
        ? Number(value)
        : Number.NaN;
    if (!(parsed >= 0 && parsed <= 1))
      return {
        problem: `manifests[${String(index)}].metadata.annotations["${ERROR_RATIO_ANNOTATION}"]: must be a number from 0 to 1 written as a string, got ${showValue(value)}`,
      };
    ratio = Math.max(ratio ?? 0, parsed);
  }
  return { ratio };
}
