/**
 * `flotilla run skip --targets Group:g,Member:m,Stage:s`: az fleet's way to name what to skip, as
 * `TYPE:NAME` pairs separated by commas (docs/cli.md#runs). The types are AKS's: `Stage`, `Group`
 * and `Member`; `AfterStageWait` is refused, as the engine cannot skip a wait on its own.
 */
import {
  fail,
  ok,
  problem,
  type Result,
  type SkipTarget,
} from "@flotilla/core";

const TYPES: readonly SkipTarget["type"][] = ["Stage", "Group", "Member"];

/** Reads every `--targets` value; problems name the flag and the piece that is wrong. */
export function parseSkipTargets(
  values: readonly string[],
): Result<SkipTarget[]> {
  const targets: SkipTarget[] = [];
  const problems: string[] = [];
  for (const value of values) {
    for (const piece of value.split(",")) {
      const target = piece.trim();
      const colon = target.indexOf(":");
      const type = colon === -1 ? target : target.slice(0, colon);
      const name = colon === -1 ? "" : target.slice(colon + 1);
      if (type === "AfterStageWait") {
        problems.push(
          `--targets "${target}": skipping an after-stage wait is not supported; skip the stage instead`,
        );
      } else if (!TYPES.includes(type as SkipTarget["type"])) {
        problems.push(
          `--targets "${target}": must be TYPE:NAME with TYPE one of ${TYPES.join(", ")} (e.g. Group:prod-eu)`,
        );
      } else if (name === "") {
        problems.push(
          `--targets "${target}": needs the name of the ${type.toLowerCase()} after "${type}:"`,
        );
      } else targets.push({ type: type as SkipTarget["type"], name });
    }
  }
  return problems.length > 0 ? fail(problems.map(problem)) : ok(targets);
}
