/**
 * `flotilla simulate`: the rollout run in virtual time against a scenario, offline.
 */
import { simulate } from "@flotilla/core";
import { EXIT_OK, EXIT_USAGE } from "../io.js";
import { renderSimulation } from "../render/simulation-table.js";
import type { Command } from "./command.js";
import {
  loadPreviewFiles,
  PREVIEW_OPTIONS,
  previewFiles,
  printProblems,
  renderOptions,
  toJson,
} from "./preview-inputs.js";

/** The `simulate` command. */
export const simulateCommand: Command = {
  name: "simulate",
  summary:
    "run a rollout in virtual time against a scenario and show its timeline (offline)",
  description: [
    "Runs the real rollout engine in virtual time, with no hub: every release, state change and",
    "gate on a timeline, the final state of each wave, group and member with failure counts, and",
    "the total duration. The scenario file sets the start time, how long clusters take, which fail,",
    "approvals and the deadline. Exit code 2 on invalid input.",
  ].join("\n"),
  options: {
    ...PREVIEW_OPTIONS,
    scenario: {
      type: "string",
      valueName: "FILE",
      required: true,
      description:
        "scenario: start, kind, timings, failures, approvals (YAML or JSON)",
    },
    "no-timeline": {
      type: "boolean",
      description: "show only the summary, not the timeline",
    },
  },
  run: async (args, io) => {
    const files = previewFiles(args, true);
    const docs = await loadPreviewFiles(io, files);
    if (docs === undefined) return EXIT_USAGE;
    const result = simulate({
      clusters: docs.clusters,
      strategy: docs.strategy,
      scenario: docs.scenario,
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
        : renderSimulation(result.value, {
            ...renderOptions(io, args),
            timeline: !args.flag("no-timeline"),
          }),
    );
    return EXIT_OK;
  },
};
