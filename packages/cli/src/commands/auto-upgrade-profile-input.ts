/**
 * What `flotilla autoupgradeprofile create|update` send: a profile in AKS's shape from `-f FILE`
 * (YAML or JSON; an AKS resource's `{properties: {...}}` is unwrapped), with flags on top, checked
 * locally by core's parser (problems name the field in the file) before the hub is asked.
 */
import {
  compact,
  formatProblem,
  ok,
  parseAutoUpgradeProfile,
  type AutoUpgradeProfileSpec,
  type Result,
} from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import { loadDocument } from "../input.js";
import type { CliIo } from "../io.js";
import type { OptionSpec, ParsedArgs } from "./command.js";

/** The flags that set a profile's fields (az fleet autoupgradeprofile's names). */
export const PROFILE_OPTIONS = {
  file: {
    type: "string",
    short: "f",
    valueName: "FILE",
    description:
      "an AKS auto-upgrade profile, {channel, updateStrategyId|strategy, nodeImageSelection, disabled, targetKubernetesVersion, longTermSupport} (YAML or JSON); flags override its fields",
  },
  channel: {
    type: "string",
    valueName: "CHANNEL",
    description:
      "Rapid, Stable, TargetKubernetesVersion, NodeImage or SecurityPatch",
  },
  strategy: {
    type: "string",
    valueName: "STRATEGY",
    description:
      "the stored update strategy its runs use (default: every member at once)",
  },
  "update-strategy-name": {
    type: "string",
    valueName: "STRATEGY",
    description: "the same as --strategy (az fleet's name)",
  },
  "node-image-selection": {
    type: "string",
    valueName: "SELECTION",
    description: "Latest (default) or Consistent",
  },
  "target-kubernetes-version": {
    type: "string",
    valueName: "MAJOR.MINOR",
    description: "the minor to follow (channel TargetKubernetesVersion only)",
  },
  "long-term-support": {
    type: "boolean",
    description:
      "follow a minor past standard support (channel TargetKubernetesVersion only)",
  },
  disabled: {
    type: "boolean",
    description: "make no run until enabled again",
  },
} as const satisfies Record<string, OptionSpec>;

/** The profile fields the flags set; `--enabled` (update only) clears `disabled`. */
function flagFields(args: ParsedArgs): Record<string, unknown> {
  return compact({
    channel: args.string("channel"),
    strategy: args.string("strategy") ?? args.string("update-strategy-name"),
    nodeImageSelection: args.string("node-image-selection"),
    targetKubernetesVersion: args.string("target-kubernetes-version"),
    longTermSupport: args.flag("long-term-support") ? true : undefined,
    disabled: args.flag("disabled")
      ? true
      : args.flag("enabled")
        ? false
        : undefined,
  });
}

/** An AKS resource (`{name, properties: {...}}`) is read as its properties. */
function profileDocument(value: unknown): unknown {
  if (
    typeof value === "object" &&
    value !== null &&
    "properties" in value &&
    typeof value.properties === "object"
  ) {
    return value.properties;
  }
  return value;
}

/** The document the flags and `-f FILE` describe (flags win), on top of `base` (update). */
export async function readProfileInput(
  io: CliIo,
  args: ParsedArgs,
  base: Record<string, unknown> = {},
): Promise<Result<Record<string, unknown>>> {
  const file = args.string("file");
  let fromFile: Record<string, unknown> = {};
  if (file !== undefined) {
    const loaded = await loadDocument(io, file);
    if (!loaded.ok) return loaded;
    const document = profileDocument(loaded.value);
    if (typeof document !== "object" || document === null) {
      return {
        ok: false,
        problems: [
          {
            path: "",
            message: `${file}: must be an auto-upgrade profile (a mapping)`,
            value: document,
          },
        ],
      };
    }
    fromFile = document as Record<string, unknown>;
  }
  const flags = flagFields(args);
  const strategy = args.string("strategy");
  const azStrategy = args.string("update-strategy-name");
  if (
    strategy !== undefined &&
    azStrategy !== undefined &&
    strategy !== azStrategy
  ) {
    return {
      ok: false,
      problems: [
        {
          path: "",
          message: `--strategy "${strategy}" and --update-strategy-name "${azStrategy}" disagree: give one of them`,
        },
      ],
    };
  }
  const document = { ...base, ...fromFile, ...flags };
  // A strategy flag replaces the file's, however the file spelled it.
  if (flags.strategy !== undefined) delete document.updateStrategyId;
  return ok(document);
}

/** Checks a document with core's parser; problems are `FILE: PATH: MESSAGE` lines. */
export function checkProfile(
  document: Record<string, unknown>,
  file: string | undefined,
):
  | { readonly ok: true; readonly value: AutoUpgradeProfileSpec }
  | { readonly ok: false; readonly lines: string[] } {
  const parsed = parseAutoUpgradeProfile(document);
  if (parsed.ok) return parsed;
  return {
    ok: false,
    lines: parsed.problems.map((p) =>
      file === undefined ? formatProblem(p) : `${file}: ${formatProblem(p)}`,
    ),
  };
}

export function specToWire(
  spec: AutoUpgradeProfileSpec,
): wire.AutoUpgradeProfileSpec {
  return {
    channel: spec.channel,
    strategy: spec.strategy ?? "",
    nodeImageSelection: spec.nodeImageSelection,
    disabled: spec.disabled,
    ...compact({
      targetKubernetesVersion: spec.targetKubernetesVersion,
      longTermSupport: spec.longTermSupport,
    }),
  };
}

/** A stored spec as the AKS-shaped document `update` starts from. */
export function specDocument(
  spec: wire.AutoUpgradeProfileSpec__Output,
): Record<string, unknown> {
  return compact({
    channel: spec.channel,
    strategy: spec.strategy === "" ? undefined : spec.strategy,
    nodeImageSelection: spec.nodeImageSelection,
    disabled: spec.disabled,
    targetKubernetesVersion: spec.targetKubernetesVersion ?? undefined,
    longTermSupport: spec.longTermSupport ?? undefined,
  });
}
