/**
 * `flotilla group create|update|get|list|delete`: cluster groups, named label selectors over the
 * fleet (Fleet's ClusterGroup) whose own labels feed `clusterGroupSelector`.
 */
import type { wire } from "@flotilla/protocol";
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
import { formatLabels, renderTable, type Column } from "../render/table.js";
import { formatAgo, formatInstant } from "../render/time.js";
import { DEFAULT_MAX_LINES, labelledList } from "../render/wrap.js";
import { expectedRevision, selectorProblems } from "./cluster.js";
import type {
  Noun,
  OptionSpec,
  ParsedArgs,
  PositionalSpec,
} from "./command.js";
import { parseLabelChanges } from "./label-args.js";
import { compact, formatProblem } from "@flotilla/core";

const NAME: PositionalSpec = { name: "NAME", description: "the group's name" };

const SELECTOR_OPTION: OptionSpec = {
  type: "string",
  valueName: "SELECTOR",
  description:
    'which clusters belong, e.g. env=prod,region in (eu,us) ("" selects every cluster)',
};

/** How a group's selector reads: absent selects nothing, "" everything. */
export function selectorWord(selector: string | undefined): string {
  if (selector === undefined) return "<none: selects no cluster>";
  return selector === "" ? "<every cluster>" : selector;
}

function labelOption(allowRemove: boolean): OptionSpec {
  return {
    type: "string",
    valueName: allowRemove ? "KEY=VALUE|KEY-" : "KEY=VALUE",
    multiple: true,
    description: allowRemove
      ? "set (key=value) or remove (key-) one of the group's own labels; repeatable"
      : "one of the group's own labels (for clusterGroupSelector); repeatable",
  };
}

/** Checks --selector and --label; the group's name, selector and label changes. */
function groupInput(command: string, args: ParsedArgs, allowRemove: boolean) {
  const selector = args.string("selector");
  const labels = parseLabelChanges(args.strings("label"), { allowRemove });
  const revision = expectedRevision(command, args);
  const problems = [
    ...(selector === undefined ? [] : selectorProblems(command, selector)),
    ...(labels.ok
      ? []
      : labels.problems.map((p) => usageMessage(command, formatProblem(p)))),
    ...(revision.ok ? [] : revision.problems.map(formatProblem)),
  ];
  if (problems.length > 0 || !labels.ok || !revision.ok)
    return refused(problems);
  return prepared({
    name: args.positional("NAME") ?? "",
    selector,
    labels: labels.value,
    expectedRevision: revision.value,
  });
}

function groupSummary(
  group: wire.ClusterGroup__Output,
  verb: string,
): string[] {
  return [
    `Cluster group ${group.name} ${verb} (revision ${String(group.revision)}).`,
    `  Selector:  ${selectorWord(group.selector)}`,
    `  Labels:    ${formatLabels(group.labels)}`,
  ];
}

const create = adminCommand({
  name: "group create",
  summary: "create a cluster group from a label selector",
  description:
    "Creates a named label selector over the fleet; its own labels feed clusterGroupSelector.",
  positionals: [NAME],
  options: {
    selector: { ...SELECTOR_OPTION, required: true },
    label: labelOption(false),
  },
  mutating: true,
  prepare: (args) => groupInput("group create", args, false),
  run: async (ctx, input) => {
    const { group } = await ctx.hub.call("createClusterGroup", {
      group: {
        name: input.name,
        labels: { ...input.labels.set },
        ...compact({ selector: input.selector }),
      },
      reason: ctx.reason,
    });
    if (ctx.json) printJson(ctx.io, { group });
    else
      printLines(
        ctx.io,
        groupSummary(present(group, "cluster group"), "created"),
      );
    return EXIT_OK;
  },
});

const update = adminCommand({
  name: "group update",
  summary: "change a cluster group's selector or labels",
  description:
    "Reads the group, applies the changes and writes it back only if nobody changed it meanwhile\n" +
    "(compare-and-set on its revision, or on --expected-revision when given).",
  positionals: [NAME],
  options: {
    selector: SELECTOR_OPTION,
    label: labelOption(true),
    ...EXPECTED_REVISION_OPTION,
  },
  mutating: true,
  prepare: (args) => {
    const input = groupInput("group update", args, true);
    if (!input.ok) return input;
    const { selector, labels } = input.value;
    if (
      selector === undefined &&
      Object.keys(labels.set).length === 0 &&
      labels.remove.length === 0
    )
      return refused([
        usageMessage(
          "group update",
          "nothing to change: give --selector or --label",
        ),
      ]);
    return input;
  },
  run: async (ctx, input) => {
    const answer = await ctx.hub.call("getClusterGroup", { name: input.name });
    const current = present(answer.group, "cluster group");
    const labels: Record<string, string> = {
      ...current.labels,
      ...input.labels.set,
    };
    for (const key of input.labels.remove) Reflect.deleteProperty(labels, key);
    const selector = input.selector ?? current.selector;
    const { group } = await ctx.hub.call("updateClusterGroup", {
      group: {
        name: current.name,
        labels,
        ...compact({ selector }),
      },
      expectedRevision:
        input.expectedRevision === 0
          ? current.revision
          : input.expectedRevision,
      reason: ctx.reason,
    });
    if (ctx.json) printJson(ctx.io, { group });
    else
      printLines(
        ctx.io,
        groupSummary(present(group, "cluster group"), "updated"),
      );
    return EXIT_OK;
  },
});

const get = adminCommand({
  name: "group get",
  summary: "show a cluster group and the clusters in it now",
  description:
    "Shows the group's selector and labels, and the clusters it selects now.",
  positionals: [NAME],
  options: {
    all: {
      type: "boolean",
      description: 'list every cluster instead of "… and N more"',
    },
  },
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const response = await ctx.hub.call("getClusterGroup", { name });
    if (ctx.json) {
      printJson(ctx.io, response);
      return EXIT_OK;
    }
    const group = present(response.group, "cluster group");
    const { clusters } = response;
    const label = `  Clusters (${String(clusters.length)}): `;
    printLines(ctx.io, [
      ctx.render.style.bold(`Cluster group ${group.name}`),
      `  Selector:  ${selectorWord(group.selector)}`,
      `  Labels:    ${formatLabels(group.labels)}`,
      `  Updated:   ${formatInstant(group.updatedAtMs)} (revision ${String(group.revision)})`,
      ...(clusters.length === 0
        ? [`${label}none`]
        : labelledList(label, clusters, {
            width: ctx.render.width,
            indent: 4,
            ...(ctx.args.flag("all") ? {} : { maxLines: DEFAULT_MAX_LINES }),
          })),
    ]);
    return EXIT_OK;
  },
});

const list = adminCommand({
  name: "group list",
  summary: "list the cluster groups",
  description: "Lists every cluster group with its selector and labels.",
  prepare: () => prepared(undefined),
  run: async (ctx) => {
    const groups = await listAll(async (pageToken) => {
      const page = await ctx.hub.call("listClusterGroups", { pageToken });
      return { items: page.groups, nextPageToken: page.nextPageToken };
    });
    if (ctx.json) printJson(ctx.io, { groups });
    else if (groups.length === 0) printLines(ctx.io, ["No cluster groups."]);
    else {
      const nowMs = ctx.io.now();
      const columns: Column<wire.ClusterGroup__Output>[] = [
        { header: "NAME", cell: (g) => g.name },
        { header: "SELECTOR", cell: (g) => selectorWord(g.selector) },
        { header: "UPDATED", cell: (g) => formatAgo(g.updatedAtMs, nowMs) },
        { header: "LABELS", cell: (g) => formatLabels(g.labels) },
      ];
      printLines(ctx.io, renderTable(columns, groups, ctx.render.style));
    }
    return EXIT_OK;
  },
});

const remove = adminCommand({
  name: "group delete",
  summary: "delete a cluster group",
  description:
    "Deletes the group; bundles that target it then select no cluster through it.",
  positionals: [NAME],
  mutating: true,
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const response = await ctx.hub.call("deleteClusterGroup", {
      name,
      reason: ctx.reason,
    });
    if (ctx.json) printJson(ctx.io, response);
    else printLines(ctx.io, [`Cluster group ${name} deleted.`]);
    return EXIT_OK;
  },
});

/** `flotilla group …`. */
export const groupNoun: Noun = {
  name: "group",
  summary: "create, update, inspect and delete cluster groups",
  verbs: [create, update, get, list, remove],
};
