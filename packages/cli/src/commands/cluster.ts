/**
 * `flotilla cluster list|get|label|pause|unpause|remove`: the fleet as the hub sees it.
 */
import { clusterBundleLines } from "../render/bundle-view.js";
import {
  fail,
  formatProblem,
  ok,
  parseSelectorString,
  problem,
  compact,
  type Result,
} from "@flotilla/core";
import { EXIT_OK } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
} from "../hub/admin-command.js";
import { present } from "../hub/answer.js";
import { EXPECTED_REVISION_OPTION } from "../hub/options.js";
import { printJson, printLines } from "../hub/output.js";
import { listAll } from "../hub/pages.js";
import { clusterDetail, clusterTable } from "../render/cluster-view.js";
import { formatLabels } from "../render/table.js";
import { pauseCluster, unpauseCluster } from "./cluster-pause.js";
import type { Noun, ParsedArgs, PositionalSpec } from "./command.js";
import { parseLabelChanges } from "./label-args.js";

const NAME: PositionalSpec = {
  name: "NAME",
  description: "the cluster's name",
};

/** Checks a `-l` selector locally; problems as printable lines. */
export function selectorProblems(command: string, selector: string): string[] {
  const parsed = parseSelectorString(selector, "");
  return parsed.ok
    ? []
    : parsed.problems.map((p) =>
        usageMessage(
          command,
          `selector ${JSON.stringify(selector)}: ${formatProblem(p)}`,
        ),
      );
}

/** Parses `--expected-revision`; 0 (the default) means "any". */
export function expectedRevision(
  command: string,
  args: ParsedArgs,
): Result<number> {
  const text = args.string("expected-revision");
  if (text === undefined) return ok(0);
  const value = Number(text);
  return /^\d+$/.test(text) && Number.isSafeInteger(value)
    ? ok(value)
    : fail([
        problem(
          usageMessage(
            command,
            `--expected-revision must be a whole number (got "${text}")`,
          ),
        ),
      ]);
}

const list = adminCommand({
  name: "cluster list",
  summary: "list the clusters, optionally those a label selector matches",
  description:
    "Lists every cluster the hub knows: its connection, Kubernetes version, intent generations\n" +
    "(applied/issued), when its agent was last seen, and its effective labels.",
  options: {
    selector: {
      type: "string",
      short: "l",
      valueName: "SELECTOR",
      description:
        "only clusters whose labels match, e.g. env=prod,tier in (a,b)",
    },
  },
  prepare: (args) => {
    const selector = args.string("selector") ?? "";
    const problems = selectorProblems("cluster list", selector);
    return problems.length > 0 ? refused(problems) : prepared(selector);
  },
  run: async (ctx, labelSelector) => {
    const clusters = await listAll(async (pageToken) => {
      const page = await ctx.hub.call("listClusters", {
        labelSelector,
        pageToken,
      });
      return { items: page.clusters, nextPageToken: page.nextPageToken };
    });
    if (ctx.json) printJson(ctx.io, { clusters });
    else if (clusters.length === 0)
      printLines(ctx.io, [
        labelSelector === ""
          ? "No clusters."
          : "No cluster matches the selector.",
      ]);
    else printLines(ctx.io, clusterTable(clusters, ctx.render, ctx.io.now()));
    return EXIT_OK;
  },
});

const get = adminCommand({
  name: "cluster get",
  summary:
    "show one cluster: facts, node pools, maintenance windows, the bundles on it",
  description:
    "Shows what the cluster's agent last reported (version, region, node pools, the owner's\n" +
    "maintenance windows and freezes) and what the hub holds (labels, groups, intent generations),\n" +
    "then every bundle that targets it: state, current, released and applied revision, hold reason.",
  positionals: [NAME],
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const { cluster, bundles } = await ctx.hub.call("getCluster", { name });
    if (ctx.json) printJson(ctx.io, { cluster, bundles });
    else
      printLines(ctx.io, [
        ...clusterDetail(present(cluster, "cluster"), ctx.render, ctx.io.now()),
        ...clusterBundleLines(bundles, ctx.render, ctx.io.now()),
      ]);
    return EXIT_OK;
  },
});

const label = adminCommand({
  name: "cluster label",
  summary: "set or remove a cluster's labels and update group",
  description:
    "Sets labels (key=value) and removes them (key-), overriding what the agent reports.\n" +
    'With --update-group, sets the AKS-style update group ("" clears it).',
  positionals: [
    NAME,
    {
      name: "LABEL",
      optional: true,
      variadic: true,
      description: "key=value to set, key- to remove",
    },
  ],
  options: {
    "update-group": {
      type: "string",
      valueName: "GROUP",
      description: 'the update group staged runs select by ("" clears it)',
    },
    ...EXPECTED_REVISION_OPTION,
  },
  mutating: true,
  prepare: (args) => {
    const parsed = parseLabelChanges(args.positionals("LABEL"), {
      allowRemove: true,
    });
    const revision = expectedRevision("cluster label", args);
    const updateGroup = args.string("update-group");
    const problems = [
      ...(parsed.ok
        ? []
        : parsed.problems.map((p) =>
            usageMessage("cluster label", formatProblem(p)),
          )),
      ...(revision.ok ? [] : revision.problems.map(formatProblem)),
    ];
    if (
      parsed.ok &&
      updateGroup === undefined &&
      Object.keys(parsed.value.set).length === 0 &&
      parsed.value.remove.length === 0
    )
      problems.push(
        usageMessage(
          "cluster label",
          "nothing to change: give key=value, key- or --update-group",
        ),
      );
    if (problems.length > 0 || !parsed.ok || !revision.ok)
      return refused(problems);
    return prepared({
      name: args.positional("NAME") ?? "",
      setLabels: { ...parsed.value.set },
      removeLabels: [...parsed.value.remove],
      ...compact({ updateGroup }),
      expectedRevision: revision.value,
    });
  },
  run: async (ctx, request) => {
    const answer = await ctx.hub.call("labelCluster", {
      ...request,
      reason: ctx.reason,
    });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const cluster = present(answer.cluster, "cluster");
    printLines(ctx.io, [
      `Cluster ${cluster.name} updated (revision ${String(cluster.revision)}).`,
      `  Labels:        ${formatLabels(cluster.labels)}`,
      `  Update group:  ${cluster.updateGroup ?? "-"}`,
    ]);
    return EXIT_OK;
  },
});

const remove = adminCommand({
  name: "cluster remove",
  summary: "remove a cluster from the fleet",
  description:
    "Removes the cluster: its identity is refused from now on, and runs skip it (reason Left).",
  positionals: [NAME],
  mutating: true,
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const response = await ctx.hub.call("removeCluster", {
      name,
      reason: ctx.reason,
    });
    if (ctx.json) printJson(ctx.io, response);
    else printLines(ctx.io, [`Cluster ${name} removed.`]);
    return EXIT_OK;
  },
});

/** `flotilla cluster …`. */
export const clusterNoun: Noun = {
  name: "cluster",
  summary: "list, inspect, label, pause and remove clusters",
  verbs: [list, get, label, pauseCluster, unpauseCluster, remove],
};
