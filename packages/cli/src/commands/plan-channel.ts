/**
 * `flotilla plan --channel`: what an auto-upgrade channel resolves to with a catalogue of offered
 * versions, and what the generated run would do to each member (offline, core's `planChannel`).
 */
import {
  formatProblem,
  planChannel,
  type InputProblem,
  type NodeImageSelection,
  compact,
} from "@flotilla/core";
import { EXIT_OK, EXIT_USAGE, type CliIo } from "../io.js";
import { renderChannelPlan } from "../render/channel-plan.js";
import type { OptionSpec, ParsedArgs } from "./command.js";
import {
  loadPreviewFiles,
  problemLine,
  renderOptions,
  toJson,
  type PreviewFiles,
} from "./preview-inputs.js";

/** The options of `plan` that describe an auto-upgrade profile (AKS's field names as flags). */
export const CHANNEL_OPTIONS = {
  channel: {
    type: "string",
    valueName: "CHANNEL",
    description:
      "plan the run an auto-upgrade channel generates: Rapid, Stable, TargetKubernetesVersion, NodeImage or SecurityPatch (needs --catalogue)",
  },
  "target-kubernetes-version": {
    type: "string",
    valueName: "MAJOR.MINOR",
    description: "with --channel TargetKubernetesVersion: the minor to follow",
  },
  "long-term-support": {
    type: "boolean",
    description:
      "with --channel TargetKubernetesVersion: allow a long-term-support minor",
  },
  "node-image-selection": {
    type: "string",
    choices: ["Latest", "Consistent"],
    description: "node images of the generated run (default Latest)",
  },
  catalogue: {
    type: "string",
    valueName: "FILE",
    description:
      "with --channel: the Kubernetes versions and node images offered (YAML or JSON)",
  },
} as const satisfies Record<string, OptionSpec>;

const PROFILE_FLAGS: Readonly<Record<string, string>> = {
  channel: "--channel",
  targetKubernetesVersion: "--target-kubernetes-version",
  longTermSupport: "--long-term-support",
};

/** Usage problems of the channel options (which need each other), or none. */
export function channelUsageProblems(args: ParsedArgs): string[] {
  if (args.string("channel") !== undefined)
    return args.string("catalogue") === undefined
      ? ["--channel needs --catalogue FILE (what the platform offers)"]
      : [];
  const given = [
    "catalogue",
    "target-kubernetes-version",
    "node-image-selection",
  ].filter((name) => args.string(name) !== undefined);
  if (args.flag("long-term-support")) given.push("long-term-support");
  return given.map((name) => `--${name} only goes with --channel`);
}

/** A profile problem is about a flag: `flotilla: plan: --FLAG: message (got VALUE)`. */
function flagLine(problem: InputProblem): string {
  const flag = PROFILE_FLAGS[problem.path] ?? "--channel";
  return `flotilla: plan: ${flag}: ${formatProblem({ ...problem, path: "" })}`;
}

/** Runs `plan --channel`: loads the files, plans, prints; exit code 2 on bad input. */
export async function runChannelPlan(
  args: ParsedArgs,
  io: CliIo,
): Promise<number> {
  const files: PreviewFiles = {};
  for (const [source, option] of [
    ["clusters", "clusters"],
    ["clusterGroups", "cluster-groups"],
    ["strategy", "strategy"],
    ["catalogue", "catalogue"],
  ] as const) {
    const file = args.string(option);
    if (file !== undefined) files[source] = file;
  }
  const docs = await loadPreviewFiles(io, files);
  if (docs === undefined) return EXIT_USAGE;
  const target = args.string("target-kubernetes-version");
  const result = planChannel({
    clusters: docs.clusters,
    catalogue: docs.catalogue,
    ...(files.strategy === undefined ? {} : { strategy: docs.strategy }),
    ...(files.clusterGroups === undefined
      ? {}
      : { clusterGroups: docs.clusterGroups }),
    profile: {
      channel: args.string("channel"),
      ...compact({ targetKubernetesVersion: target }),
      ...(args.flag("long-term-support") ? { longTermSupport: true } : {}),
    },
    ...(args.string("node-image-selection") === undefined
      ? {}
      : {
          nodeImageSelection: args.string(
            "node-image-selection",
          ) as NodeImageSelection,
        }),
  });
  if (!result.ok) {
    const lines = result.problems.map((p) =>
      p.source === "profile" ? flagLine(p) : problemLine(p, files),
    );
    io.stderr(`${lines.join("\n")}\n`);
    return EXIT_USAGE;
  }
  io.stdout(
    args.string("output") === "json"
      ? toJson(result.value)
      : renderChannelPlan(result.value, renderOptions(io, args)),
  );
  return EXIT_OK;
}
