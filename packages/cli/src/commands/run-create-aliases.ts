/**
 * The `az fleet updaterun create` names `flotilla run create` accepts beside its own
 * (docs/cli.md#runs): `--update-strategy-name` for `--strategy`, and `--upgrade-type
 * Full|ControlPlaneOnly|NodeImageOnly` for `--control-plane-only` and `--node-image-only`.
 * `--kubernetes-version` and `--node-image-selection` are spelled the same in both. An alias and
 * the flag it stands for may be given together only when they agree.
 */
import { compact, fail, ok, problem, type Result } from "@flotilla/core";
import type { OptionSpec, ParsedArgs } from "./command.js";

/** az's upgrade types. */
export const UPGRADE_TYPES = [
  "Full",
  "ControlPlaneOnly",
  "NodeImageOnly",
] as const;

/** The options the aliases add to `run create`. */
export const AZ_CREATE_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  "update-strategy-name": {
    type: "string",
    valueName: "NAME",
    description: "the same as --strategy (az fleet's name)",
  },
  "upgrade-type": {
    type: "string",
    choices: UPGRADE_TYPES,
    description:
      "az fleet's upgrade type: Full (with --kubernetes-version), ControlPlaneOnly or NodeImageOnly",
  },
};

/** What the flags and their aliases say together. */
export interface CreateChoices {
  readonly strategyName?: string;
  readonly controlPlaneOnly: boolean;
  readonly imageOnly: boolean;
}

/**
 * Reads `--strategy`, `--control-plane-only` and `--node-image-only` with their aliases; problems
 * are whole messages, prefixed with `prefix` (the command's name).
 */
export function readCreateChoices(
  args: ParsedArgs,
  prefix: (message: string) => string,
): Result<CreateChoices> {
  const problems: string[] = [];
  const own = args.string("strategy");
  const alias = args.string("update-strategy-name");
  if (own !== undefined && alias !== undefined && own !== alias)
    problems.push(
      prefix(
        `--update-strategy-name "${alias}" and --strategy "${own}" disagree: give one of them`,
      ),
    );
  let controlPlaneOnly = args.flag("control-plane-only");
  let imageOnly = args.flag("node-image-only");
  const type = args.string("upgrade-type");
  const clash = (flag: string): void => {
    problems.push(
      prefix(
        `--upgrade-type ${type ?? ""} contradicts ${flag}: give one of them`,
      ),
    );
  };
  if (type === "Full") {
    if (controlPlaneOnly) clash("--control-plane-only");
    if (imageOnly) clash("--node-image-only");
  } else if (type === "ControlPlaneOnly") {
    if (imageOnly) clash("--node-image-only");
    controlPlaneOnly = true;
  } else if (type === "NodeImageOnly") {
    if (controlPlaneOnly) clash("--control-plane-only");
    imageOnly = true;
  }
  if (
    (type === "Full" || type === "ControlPlaneOnly") &&
    args.string("kubernetes-version") === undefined
  )
    problems.push(
      prefix(`--upgrade-type ${type} needs --kubernetes-version V`),
    );
  if (problems.length > 0) return fail(problems.map(problem));
  return ok({
    ...compact({ strategyName: own ?? alias }),
    controlPlaneOnly,
    imageOnly,
  });
}
