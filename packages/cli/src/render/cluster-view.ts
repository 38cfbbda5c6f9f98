/**
 * Clusters for people: the `cluster list` table and the facts `cluster get` shows (node pools and
 * a summary of the owner's maintenance windows per scope, in core's words).
 */
import { describeWindows, WINDOW_SCOPES } from "@flotilla/core";
import { maintenanceFromWire, type wire } from "@flotilla/protocol";
import { enumWord } from "./enum-word.js";
import type { RenderOptions } from "./options.js";
import type { Style } from "./style.js";
import { formatLabels, renderTable, type Column } from "./table.js";
import { formatAgo, formatInstant } from "./time.js";

/** `Connected`, `Unreachable`, … coloured by what it means for rollouts. */
export function connectionWord(
  connection: wire.Cluster__Output["connection"],
  style: Style,
): string {
  const word = enumWord(connection, "CONNECTION_STATE_");
  switch (word) {
    case "Connected":
      return style.green(word);
    case "Unreachable":
      return style.red(word);
    default:
      return style.yellow(word);
  }
}

/** `applied/issued`, marked when the agent has not caught up. */
function generation(c: wire.Cluster__Output): string {
  const text = `${String(c.appliedGeneration)}/${String(c.intentGeneration)}`;
  return c.appliedGeneration < c.intentGeneration ? `${text}*` : text;
}

function lastSeen(c: wire.Cluster__Output, nowMs: number): string {
  return c.lastSeenAtMs === undefined
    ? "never"
    : formatAgo(c.lastSeenAtMs, nowMs);
}

/** The `cluster list` table. */
export function clusterTable(
  clusters: readonly wire.Cluster__Output[],
  options: RenderOptions,
  nowMs: number,
): string[] {
  const columns: Column<wire.Cluster__Output>[] = [
    { header: "NAME", cell: (c) => c.name },
    {
      header: "CONNECTION",
      cell: (c) =>
        connectionWord(c.connection, options.style) +
        (c.paused ? options.style.yellow(" (paused)") : ""),
    },
    { header: "KUBERNETES", cell: (c) => c.facts?.kubernetesVersion ?? "-" },
    { header: "APPLIED/INTENT", cell: generation, align: "right" },
    { header: "LAST SEEN", cell: (c) => lastSeen(c, nowMs) },
    { header: "LABELS", cell: (c) => formatLabels(c.labels) },
  ];
  const lines = renderTable(columns, clusters, options.style);
  if (clusters.some((c) => c.appliedGeneration < c.intentGeneration))
    lines.push(
      "",
      "* the agent has not yet reported the latest intent applied",
    );
  return lines;
}

function field(name: string, value: string): string {
  return `  ${`${name}:`.padEnd(16)}${value}`;
}

function maintenanceLines(facts: wire.ClusterFacts__Output | null): string[] {
  const decoded = maintenanceFromWire(facts?.maintenance ?? null);
  if (!decoded.ok)
    return ["  (the hub sent maintenance this client cannot read)"];
  return WINDOW_SCOPES.map((scope) =>
    field(scope, describeWindows(decoded.value, scope)),
  );
}

function poolLines(
  facts: wire.ClusterFacts__Output | null,
  style: Style,
): string[] {
  const pools = facts?.nodePools ?? [];
  if (pools.length === 0) return ["  (none reported)"];
  const columns: Column<wire.NodePool__Output>[] = [
    { header: "NAME", cell: (p) => p.name },
    { header: "IMAGE FAMILY", cell: (p) => p.imageFamily },
    { header: "IMAGE VERSION", cell: (p) => p.imageVersion },
    {
      header: "KUBERNETES",
      cell: (p) => p.kubernetesVersion ?? "(control plane's)",
    },
  ];
  return renderTable(columns, pools, style).map((l) => `  ${l}`);
}

/** What `cluster get` prints. */
export function clusterDetail(
  c: wire.Cluster__Output,
  options: RenderOptions,
  nowMs: number,
): string[] {
  const { style } = options;
  const connection =
    connectionWord(c.connection, style) +
    (c.agentVersion === undefined ? "" : ` (agent ${c.agentVersion})`) +
    ` · last seen ${lastSeen(c, nowMs)}`;
  const groups =
    c.clusterGroups.length === 0 ? "<none>" : c.clusterGroups.join(", ");
  return [
    style.bold(`Cluster ${c.name}`),
    field("Connection", connection),
    field("Registered", formatInstant(c.registeredAtMs)),
    field("Kubernetes", c.facts?.kubernetesVersion ?? "unknown"),
    field("Region", c.facts?.region ?? "-"),
    field(
      "Support plan",
      c.facts?.supportPlan ?? "KubernetesOfficial (none reported)",
    ),
    field("Labels", formatLabels(c.labels)),
    field("Update group", c.updateGroup ?? "-"),
    ...(c.paused
      ? [
          field(
            "Paused",
            style.yellow(
              "yes: bundle rollouts give it no new revision (flotilla cluster unpause)",
            ),
          ),
        ]
      : []),
    field("Cluster groups", groups),
    field(
      "Intent",
      `generation ${String(c.intentGeneration)} issued, ${String(c.appliedGeneration)} applied`,
    ),
    field("Revision", String(c.revision)),
    "",
    "Node pools:",
    ...poolLines(c.facts, style),
    "",
    "Maintenance windows:",
    ...maintenanceLines(c.facts),
  ];
}
