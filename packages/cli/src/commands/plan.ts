/**
 * `flotilla plan`: how a strategy splits a fleet into waves, groups and clusters, offline.
 */
import { plan } from "@flotilla/core";
import { EXIT_OK, EXIT_USAGE } from "../io.js";
import { renderPlan } from "../render/plan-table.js";
import type { Command } from "./command.js";
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
    "takes, and warnings about settings that disable a gate. Exit code 2 on invalid input.",
  ].join("\n"),
  options: PREVIEW_OPTIONS,
  run: async (args, io) => {
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
