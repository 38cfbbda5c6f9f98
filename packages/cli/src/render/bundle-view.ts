/**
 * Bundles for people: the `bundle list` table and `bundle get`'s counts, partition summary (in
 * rollout order, with the resolved limits) and per-cluster table with hold reasons.
 */
import { dependencyLabel, parseDependsOn, parseJsonText } from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import { rollbackLine } from "./bundle-rollback-view.js";
import { enumWord } from "./enum-word.js";
import { count, DOT } from "./limits.js";
import type { RenderOptions } from "./options.js";
import { styleState } from "./style.js";
import { formatLabels, renderTable, type Column } from "./table.js";
import { formatAgo } from "./time.js";
import { DEFAULT_MAX_LINES, labelledList } from "./wrap.js";

/** A revision short enough for a column: the first 12 characters of its hash. */
export function shortRevision(revision: string | undefined): string {
  if (revision === undefined || revision === "") return "-";
  const hash = revision.startsWith("sha256:") ? revision.slice(7) : revision;
  return hash.slice(0, 12);
}

/** How the bundle rolls out: Fleet partitions, or staged runs of a stored strategy. */
export function rolloutWord(spec: wire.BundleSpec__Output | null): string {
  if (spec?.updateStrategyName !== undefined)
    return `staged (strategy ${spec.updateStrategyName})`;
  return "partitioned";
}

const COUNT_FIELDS: readonly [keyof wire.BundleCounts__Output, string][] = [
  ["ready", "Ready"],
  ["modified", "Modified"],
  ["notReady", "NotReady"],
  ["errApplied", "ErrApplied"],
  ["waitApplied", "WaitApplied"],
  ["outOfSync", "OutOfSync"],
  ["pending", "Pending"],
];

/** `12 targets · 8 Ready · 2 NotReady …` (zero counts left out). */
export function countsLine(
  counts: wire.BundleCounts__Output | null,
  options: RenderOptions,
): string {
  if (counts === null) return "no status yet";
  const words = [count(counts.targets, "target")];
  for (const [field, state] of COUNT_FIELDS)
    if (counts[field] > 0)
      words.push(
        `${String(counts[field])} ${styleState(options.style, state)}`,
      );
  if (counts.unassigned > 0)
    words.push(`${String(counts.unassigned)} unassigned`);
  return words.join(DOT);
}

/** The `bundle list` table. */
export function bundleTable(
  bundles: readonly wire.Bundle__Output[],
  options: RenderOptions,
  nowMs: number,
): string[] {
  const columns: Column<wire.Bundle__Output>[] = [
    { header: "NAME", cell: (b) => b.spec?.name ?? "?" },
    { header: "REVISION", cell: (b) => shortRevision(b.revision) },
    {
      header: "ROLLOUT",
      cell: (b) =>
        rolloutWord(b.spec) +
        (b.spec?.paused === true ? ", paused" : "") +
        (b.rolledBack == null ? "" : ", RolledBack"),
    },
    {
      header: "TARGETS",
      cell: (b) => String(b.counts?.targets ?? 0),
      align: "right",
    },
    {
      header: "READY",
      cell: (b) => String(b.counts?.ready ?? 0),
      align: "right",
    },
    { header: "UPDATED", cell: (b) => formatAgo(b.updatedAtMs, nowMs) },
  ];
  // Bundle labels (docs/semantics.md#dependencies-between-bundles), when any bundle has some.
  if (bundles.some((b) => Object.keys(b.spec?.labels ?? {}).length > 0))
    columns.push({
      header: "LABELS",
      cell: (b) => formatLabels(b.spec?.labels ?? {}),
    });
  return renderTable(columns, bundles, options.style);
}

function heldWord(c: wire.BundleClusterStatus__Output, nowMs: number): string {
  if (c.held === undefined) return "-";
  const word = enumWord(c.held, "HOLD_REASON_");
  return c.nextOpeningMs === undefined
    ? word
    : `${word} (opens ${formatAgo(c.nextOpeningMs, nowMs)})`;
}

function messageOf(c: wire.BundleClusterStatus__Output): string {
  const parts: string[] = [];
  if (c.unreachable) parts.push("agent unreachable");
  if (c.message !== "") parts.push(c.message);
  const [first] = c.reasons;
  if (first !== undefined) {
    const where =
      first.namespace === "" ? first.name : `${first.namespace}/${first.name}`;
    const more = c.reasons.length - 1 + c.reasonsTruncated;
    parts.push(
      `${first.kind} ${where} ${first.state}${first.message === "" ? "" : `: ${first.message}`}` +
        (more > 0 ? ` (+${String(more)} more)` : ""),
    );
  }
  return parts.length === 0 ? "" : parts.join("; ");
}

function partitionLines(
  answer: wire.GetBundleResponse__Output,
  options: RenderOptions,
): string[] {
  if (answer.partitions.length === 0) return [];
  const columns: Column<wire.PartitionSummary__Output>[] = [
    {
      header: "PARTITION",
      cell: (p) => (p.auto ? `${p.name} (auto)` : p.name),
    },
    { header: "CLUSTERS", cell: (p) => String(p.clusterCount), align: "right" },
    {
      header: "MAX UNAVAILABLE",
      cell: (p) => String(p.maxUnavailable),
      align: "right",
    },
    {
      header: "UNAVAILABLE",
      cell: (p) => String(p.unavailable),
      align: "right",
    },
    {
      header: "STATE",
      cell: (p) => styleState(options.style, p.notReady ? "NotReady" : "Ready"),
    },
  ];
  const lines = [
    "",
    "Partitions (rollout order):",
    ...renderTable(columns, answer.partitions, options.style).map(
      (l) => `  ${l}`,
    ),
  ];
  const l = answer.limits;
  if (l !== null)
    lines.push(
      `  Limits: maxUnavailable ${String(l.maxUnavailable)}${DOT}maxUnavailablePartitions ${String(l.maxUnavailablePartitions)}${DOT}maxNew ${String(l.maxNew)}`,
    );
  if (answer.stoppedAfter !== undefined)
    lines.push(
      options.style.yellow(
        `  The last pass stopped after partition ${answer.stoppedAfter}; later partitions wait.`,
      ),
    );
  lines.push(...gateLines(answer, options));
  return lines;
}

/** The metric gates after each partition and their measurements (docs/semantics.md#partition-gates). */
function gateLines(
  answer: wire.GetBundleResponse__Output,
  options: RenderOptions,
): string[] {
  const gates = answer.partitions.flatMap((p) =>
    p.gates.map((g) => ({ partition: p.name, g })),
  );
  if (gates.length === 0) return [];
  const lines = ["", "Partition gates:"];
  for (const { partition, g } of gates) {
    const condition = [
      g.successCondition === undefined ? "" : `success ${g.successCondition}`,
      g.failureCondition === undefined ? "" : `failure ${g.failureCondition}`,
    ]
      .filter((c) => c !== "")
      .join(DOT);
    const verdict =
      g.verdict === "Failed"
        ? options.style.red(g.verdict)
        : g.verdict === "Passed" || g.verdict === "Approved"
          ? options.style.green(g.verdict)
          : options.style.yellow(g.verdict);
    lines.push(
      `  ${g.gate} (after ${partition}): ${verdict}${DOT}${condition}`,
    );
    lines.push(`    query: ${g.query}`);
    for (const m of g.measurements) {
      const values = m.hasValues
        ? m.values.length === 0
          ? "no series"
          : m.values.map((v) => String(v)).join(", ")
        : "no value";
      lines.push(
        `    ${new Date(m.atMs).toISOString()}  ${values}  ${verdictWord(m.verdict)}  ${m.message}`,
      );
    }
    lines.push(`    ${g.message}`);
  }
  if (answer.gateFailed !== undefined)
    lines.push(
      options.style.red(
        `  Halted: ${answer.gateFailed}; nothing more is released at this revision.`,
      ),
    );
  return lines;
}

function verdictWord(verdict: string): string {
  return verdict.replace(/^MEASUREMENT_VERDICT_/, "").toLowerCase();
}

/** `bundle "db", selector "tier=data"`: fleet.yaml `dependsOn` as sent; the JSON itself if unreadable. */
export function dependsOnWords(json: string): string {
  const value = parseJsonText(json, "dependsOn");
  const parsed = value.ok ? parseDependsOn(value.value, "dependsOn") : value;
  return parsed.ok ? parsed.value.map(dependencyLabel).join(", ") : json;
}

/** The bundle's labels and dependencies, when it has any. */
function dependencyLines(spec: wire.BundleSpec__Output | null): string[] {
  const lines: string[] = [];
  const labels = spec?.labels ?? {};
  if (Object.keys(labels).length > 0)
    lines.push(`  Labels: ${formatLabels(labels)}`);
  const dependsOn = spec?.dependsOnJson ?? "";
  if (dependsOn !== "")
    lines.push(`  Depends on: ${dependsOnWords(dependsOn)}`);
  return lines;
}

/** What `bundle get` prints. */
export function bundleDetail(
  answer: wire.GetBundleResponse__Output,
  bundle: wire.Bundle__Output,
  options: RenderOptions,
  nowMs: number,
): string[] {
  const spec = bundle.spec;
  const head = [
    `Bundle ${spec?.name ?? "?"}`,
    `revision ${shortRevision(bundle.revision)}`,
    // Which drives the bundle now (docs/semantics.md#staged-bundle-runs).
    answer.updateRun === undefined
      ? rolloutWord(spec)
      : `driven by staged run ${answer.updateRun}, revision ${shortRevision(answer.updateRunRevision ?? undefined)}`,
    ...(spec?.paused === true ? [options.style.yellow("paused")] : []),
  ];
  const lines = [options.style.bold(head.join(DOT))];
  if (answer.updateRun !== undefined)
    lines.push(
      `  Driven by staged run ${answer.updateRun} until it completes (flotilla run status ${answer.updateRun})`,
    );
  if (bundle.rolledBack != null)
    lines.push(
      `  ${options.style.yellow(`RolledBack: ${rollbackLine(bundle.rolledBack, nowMs, true)}`)}`,
    );
  lines.push(`  ${countsLine(bundle.counts, options)}`);
  lines.push(...dependencyLines(spec));
  lines.push(...partitionLines(answer, options));
  if (answer.clusters.length > 0) {
    const columns: Column<wire.BundleClusterStatus__Output>[] = [
      { header: "CLUSTER", cell: (c) => c.cluster },
      { header: "PARTITION", cell: (c) => c.partition ?? "-" },
      {
        header: "STATE",
        cell: (c) =>
          styleState(options.style, enumWord(c.state, "BUNDLE_CLUSTER_STATE_")),
      },
      { header: "RELEASED", cell: (c) => shortRevision(c.releasedRevision) },
      { header: "APPLIED", cell: (c) => shortRevision(c.appliedRevision) },
      { header: "HELD", cell: (c) => heldWord(c, nowMs) },
      ...(answer.updateRun === undefined
        ? []
        : [
            {
              header: "RUN",
              cell: (c: wire.BundleClusterStatus__Output) =>
                c.runStage === undefined
                  ? "-"
                  : `${c.runStage}/${c.runGroup ?? "?"} ${enumWord(c.runMemberState ?? "", "MEMBER_STATE_")}`,
            },
          ]),
      { header: "MESSAGE", cell: messageOf },
    ];
    lines.push("", ...renderTable(columns, answer.clusters, options.style));
  }
  if (answer.unassigned.length > 0)
    lines.push(
      "",
      ...labelledList(
        `Unassigned (${String(answer.unassigned.length)}, not deployed): `,
        answer.unassigned,
        {
          width: options.width,
          ...(options.all ? {} : { maxLines: DEFAULT_MAX_LINES }),
        },
      ),
    );
  return lines;
}

/** `cluster get`'s bundles: every bundle on the cluster with its state there (Fleet's BundleDeployments). */
export function clusterBundleLines(
  bundles: readonly wire.ClusterBundleStatus__Output[],
  options: RenderOptions,
  nowMs: number,
): string[] {
  if (bundles.length === 0) return ["", "No bundle targets it."];
  const columns: Column<wire.ClusterBundleStatus__Output>[] = [
    { header: "BUNDLE", cell: (b) => b.bundle },
    {
      header: "STATE",
      cell: (b) =>
        styleState(
          options.style,
          enumWord(b.status?.state ?? "", "BUNDLE_CLUSTER_STATE_"),
        ),
    },
    { header: "REVISION", cell: (b) => shortRevision(b.revision) },
    {
      header: "RELEASED",
      cell: (b) => shortRevision(b.status?.releasedRevision),
    },
    {
      header: "APPLIED",
      cell: (b) => shortRevision(b.status?.appliedRevision),
    },
    {
      header: "HELD",
      cell: (b) => (b.status === null ? "-" : heldWord(b.status, nowMs)),
    },
    {
      header: "MESSAGE",
      cell: (b) => (b.status === null ? "" : messageOf(b.status)),
    },
  ];
  return [
    "",
    `Bundles (${String(bundles.length)}):`,
    ...renderTable(columns, bundles, options.style),
  ];
}
