/**
 * `flotilla plan` for people: a tree of waves → groups → clusters with resolved limits, then the
 * bundle-wide limits, the unassigned clusters and the warnings.
 */
import type { PlanGroup, PlanOutput, PlanWave } from "./preview-types.js";
import { count, DOT, limitWords } from "./limits.js";
import type { RenderOptions } from "./options.js";
import { unassignedLines, warningLines } from "./sections.js";
import { renderTree, type TreeNode } from "./tree.js";
import { DEFAULT_MAX_LINES, labelledList, wrapList } from "./wrap.js";

function clusterLines(
  clusters: readonly string[],
  width: number,
  options: RenderOptions,
): string[] {
  if (clusters.length === 0) return [options.style.dim("(no clusters)")];
  return wrapList(clusters, {
    width,
    ...(options.all ? {} : { maxLines: DEFAULT_MAX_LINES }),
  });
}

/** `kind name  fact · fact`, the facts wrapped under the first one when the line is too long. */
function nodeLabel(
  title: string,
  facts: readonly string[],
  options: RenderOptions,
): (width: number) => string[] {
  const head = `${title}  `;
  return (width) =>
    labelledList(head, facts, {
      width,
      separator: DOT,
      markContinuation: false,
      indent: head.length,
    }).map((line, i) =>
      i === 0 ? options.style.bold(title) + line.slice(title.length) : line,
    );
}

/** A gate of a stage or group: `gate ID  Type "name"`, and for a metric gate what it measures. */
function gateLines(gates: PlanWave["gates"], options: RenderOptions): string[] {
  return (gates ?? []).flatMap((g) => {
    const head = `gate ${g.id}  ${g.type}${g.displayName === "" ? "" : ` "${g.displayName}"`}`;
    const m = g.metric;
    if (m === undefined) return [options.style.dim(head)];
    const judged = [
      m.successCondition === undefined
        ? undefined
        : `success ${m.successCondition}`,
      m.failureCondition === undefined
        ? undefined
        : `failure ${m.failureCondition}`,
    ].filter((x) => x !== undefined);
    return [
      options.style.dim(head),
      options.style.dim(`  query ${m.query}`),
      options.style.dim(
        `  ${[...judged, `every ${String(m.intervalSeconds)}s × ${String(m.count)}`, `failureLimit ${String(m.failureLimit)}`, `inconclusiveLimit ${String(m.inconclusiveLimit)}`].join(DOT)}`,
      ),
    ];
  });
}

function groupNode(group: PlanGroup, options: RenderOptions): TreeNode {
  const facts = [count(group.clusters.length, "cluster"), ...limitWords(group)];
  return {
    label: nodeLabel(`group ${group.name}`, facts, options),
    body: (width) => [
      ...gateLines(group.gates, options),
      ...clusterLines(group.clusters, width, options),
    ],
  };
}

function clusterCount(wave: PlanWave): number {
  return wave.groups.reduce((sum, g) => sum + g.clusters.length, 0);
}

function waveNode(wave: PlanWave, options: RenderOptions): TreeNode {
  const facts = [
    count(clusterCount(wave), "cluster"),
    ...limitWords(wave),
    ...(wave.sortingLabelKey === undefined
      ? []
      : [`ordered by label ${wave.sortingLabelKey}`]),
  ];
  const label = nodeLabel(`${wave.kind} ${wave.name}`, facts, options);
  const only = wave.groups[0];
  // A Fleet partition is a wave with one group of the same name: show its clusters directly.
  if (
    wave.kind === "partition" &&
    wave.groups.length === 1 &&
    only !== undefined &&
    only.name === wave.name
  ) {
    return {
      label,
      body: (width) => clusterLines(only.clusters, width, options),
    };
  }
  const gates = gateLines(wave.gates, options);
  if (wave.groups.length === 0)
    return {
      label,
      body: () => [...gates, options.style.dim("(no groups)")],
    };
  return {
    label,
    ...(gates.length === 0 ? {} : { body: () => gates }),
    children: wave.groups.map((g) => groupNode(g, options)),
  };
}

function headline(plan: PlanOutput): string {
  const clusters = plan.waves.reduce((sum, w) => sum + clusterCount(w), 0);
  if (plan.dialect === "fleet") {
    return `Plan: Fleet rollout, ${count(plan.waves.length, "partition")}, ${count(clusters, "cluster")}`;
  }
  const groups = plan.waves.reduce((sum, w) => sum + w.groups.length, 0);
  return `Plan: staged update run, ${count(plan.waves.length, "stage")}, ${count(groups, "group")}, ${count(clusters, "cluster")}`;
}

function limitsLines(plan: PlanOutput, width: number): string[] {
  const { maxUnavailable, maxUnavailablePartitions, maxNew } = plan.limits;
  const words: string[] = [];
  if (maxUnavailable !== undefined)
    words.push(`maxUnavailable ${String(maxUnavailable)} (bundle-wide)`);
  if (maxUnavailablePartitions !== undefined) {
    words.push(
      maxUnavailablePartitions === 0
        ? "maxUnavailablePartitions 0 (each partition Ready before the next)"
        : `maxUnavailablePartitions ${String(maxUnavailablePartitions)}`,
    );
  }
  if (maxNew !== undefined) words.push(`maxNew ${String(maxNew)} (per pass)`);
  if (words.length === 0) return [];
  return labelledList("Limits: ", words, {
    width,
    separator: DOT,
    markContinuation: false,
    indent: "Limits: ".length,
  });
}

/** Renders a plan as the text `flotilla plan` prints (ends with a newline). */
export function renderPlan(plan: PlanOutput, options: RenderOptions): string {
  const lines = [options.style.bold(headline(plan))];
  lines.push(
    ...renderTree(
      plan.waves.map((w) => waveNode(w, options)),
      options.width,
    ),
  );
  lines.push(...limitsLines(plan, options.width));
  lines.push(...unassignedLines(plan.unassigned, options));
  lines.push(...warningLines(plan.warnings, options));
  return `${lines.join("\n")}\n`;
}
