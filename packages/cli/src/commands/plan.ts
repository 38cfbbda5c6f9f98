/**
 * `flotilla plan`: how a strategy splits a fleet into waves, groups and clusters, offline; with
 * `--channel`, what an auto-upgrade channel resolves to and what its run would do to each member.
 */
import { plan } from "@flotilla/core";
import { EXIT_OK, EXIT_USAGE } from "../io.js";
import { renderPlan } from "../render/plan-table.js";
import { shortUsage } from "../usage.js";
import type { Command } from "./command.js";
import {
  CHANNEL_OPTIONS,
  channelUsageProblems,
  runChannelPlan,
} from "./plan-channel.js";
import {
  loadPreviewFiles,
  PREVIEW_OPTIONS,
  previewFiles,
  printProblems,
  renderOptions,
  toJson,
} from "./preview-inputs.js";

/** The `plan` command. */
export const planCommand: Command = {
  name: "plan",
  summary:
    "show the waves, groups and clusters a strategy makes of a fleet (offline)",
  description: [
    "Runs the rollout engine on local files, with no hub: which clusters go in which partition or",
    "stage and group, in what order, with the limits resolved to numbers, which clusters no wave",
    "takes, and warnings about settings that disable a gate. With --channel and --catalogue: what",
    "an auto-upgrade channel resolves to with the versions offered, and which members the run it",
    "generates would upgrade, skip or fail, and why (--strategy is then optional: without it,",
    "members go one by one). Exit code 2 on invalid input.",
  ].join("\n"),
  options: {
    ...PREVIEW_OPTIONS,
    strategy: {
      ...PREVIEW_OPTIONS.strategy,
      // Required unless --channel is given; checked in run so the message stays the same.
      required: false,
      description:
        "fleet.yaml, a rolloutStrategy, or an AKS update strategy (YAML or JSON); required without --channel",
    },
    ...CHANNEL_OPTIONS,
  },
  run: async (args, io) => {
    const usage = channelUsageProblems(args);
    if (
      args.string("channel") === undefined &&
      args.string("strategy") === undefined
    )
      usage.push("missing required option --strategy");
    if (usage.length > 0) {
      io.stderr(
        `${usage.map((m) => `flotilla: plan: ${m}`).join("\n")}\n\n${shortUsage(planCommand)}`,
      );
      return EXIT_USAGE;
    }
    if (args.string("channel") !== undefined) return runChannelPlan(args, io);
    const files = previewFiles(args, false);
    const docs = await loadPreviewFiles(io, files);
    if (docs === undefined) return EXIT_USAGE;
    const result = plan({
      clusters: docs.clusters,
      strategy: docs.strategy,
      ...(files.clusterGroups === undefined
        ? {}
        : { clusterGroups: docs.clusterGroups }),
    });
    if (!result.ok) {
      printProblems(io, result.problems, files);
      return EXIT_USAGE;
    }
    io.stdout(
      args.string("output") === "json"
        ? toJson(result.value)
        : renderPlan(result.value, renderOptions(io, args)),
    );
    return EXIT_OK;
  },
};
