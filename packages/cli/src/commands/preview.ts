/**
 * `flotilla preview`: `flotilla plan` run by the hub against its own clusters, for a stored
 * strategy, a strategy file or a bundle's rollout, printed with the same renderer.
 */
import { FlotillaError, formatProblem } from "@flotilla/core";
import { EXIT_OK } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
} from "../hub/admin-command.js";
import { fileProblemLines } from "../hub/file-problems.js";
import { printJson } from "../hub/output.js";
import { renderPlan } from "../render/plan-table.js";
import type { PlanOutput } from "../render/preview-types.js";
import { selectorProblems } from "./cluster.js";
import { readStrategyFile } from "./strategy.js";
import type { wire } from "@flotilla/protocol";

/** The plan in the hub's answer, checked enough to render (the hub is trusted, not infallible). */
function planOf(planJson: string): PlanOutput {
  let value: unknown;
  try {
    value = JSON.parse(planJson);
  } catch {
    value = undefined;
  }
  const plan = value as Partial<PlanOutput> | undefined;
  if (
    plan === undefined ||
    plan === null ||
    !Array.isArray(plan.waves) ||
    !Array.isArray(plan.unassigned) ||
    !Array.isArray(plan.warnings) ||
    typeof plan.limits !== "object"
  )
    throw new FlotillaError(
      "internal",
      "The hub's plan is not a plan this client can read",
    );
  return plan as PlanOutput;
}

/** `flotilla preview`. */
export const previewCommand = adminCommand({
  name: "preview",
  summary:
    "show how a strategy or bundle would split the hub's clusters (server-side plan)",
  description: [
    "Like `flotilla plan`, but on the hub's clusters: which clusters go in which partition or",
    "stage and group, in what order, with limits resolved. Give a stored strategy (--strategy), a",
    "strategy or fleet.yaml file (-f), or a bundle (--bundle) to preview its own rollout.",
  ].join("\n"),
  options: {
    strategy: {
      type: "string",
      valueName: "NAME",
      description: "a stored update strategy",
    },
    file: {
      type: "string",
      short: "f",
      valueName: "FILE",
      description:
        "an update strategy, a rolloutStrategy or a fleet.yaml (YAML or JSON)",
    },
    bundle: {
      type: "string",
      valueName: "NAME",
      description: "a bundle: its rollout over its targets",
    },
    selector: {
      type: "string",
      short: "l",
      valueName: "SELECTOR",
      description: "only the clusters the selector matches",
    },
    all: {
      type: "boolean",
      description: 'list every cluster instead of "… and N more"',
    },
  },
  prepare: async (args, io) => {
    const strategy = args.string("strategy");
    const file = args.string("file");
    const bundle = args.string("bundle");
    const given = [strategy, file, bundle].filter(
      (v) => v !== undefined,
    ).length;
    if (given !== 1)
      return refused([
        usageMessage(
          "preview",
          "give one of --strategy NAME, -f FILE and --bundle NAME",
        ),
      ]);
    const labelSelector = args.string("selector") ?? "";
    const problems = selectorProblems("preview", labelSelector);
    let source: wire.PreviewPlanRequest;
    if (file !== undefined) {
      const read = await readStrategyFile(io, file);
      if (!read.ok)
        return refused([...problems, ...read.problems.map(formatProblem)]);
      source = { strategyJson: read.value };
    } else if (strategy !== undefined)
      source = { updateStrategyName: strategy };
    else source = { bundle: bundle ?? "" };
    if (problems.length > 0) return refused(problems);
    return prepared({ request: { ...source, labelSelector }, file });
  },
  run: async (ctx, { request, file }) => {
    if (file !== undefined)
      ctx.problemLines(fileProblemLines(file, ["strategyJson", "strategy"]));
    const answer = await ctx.hub.call("previewPlan", request);
    const plan = planOf(answer.planJson);
    if (ctx.json) printJson(ctx.io, plan);
    else
      ctx.io.stdout(
        renderPlan(plan, { ...ctx.render, all: ctx.args.flag("all") }),
      );
    return EXIT_OK;
  },
});
