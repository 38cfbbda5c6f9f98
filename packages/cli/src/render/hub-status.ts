/**
 * `flotilla hub status` for people: the replica that answered, a table of the live replicas (what
 * each serves, since when, the agent sessions and leases it holds, whether it may take leases),
 * then the hub's JetStream streams with their replica count, leader and health.
 */
import type { wire } from "@flotilla/protocol";
import type { Style } from "./style.js";
import { renderTable } from "./table.js";
import { formatAgo } from "./time.js";

/** Up to this many leases are named in the table; more are counted only. */
const NAMED_LEASES = 3;

function leasesCell(leases: readonly string[]): string {
  if (leases.length === 0) return "0";
  const count = String(leases.length);
  return leases.length <= NAMED_LEASES
    ? `${count} (${leases.join(", ")})`
    : count;
}

/** `healthy`, or what is wrong: no leader, copies offline or behind, the stream unreadable. */
export function streamHealth(stream: wire.HubStream__Output): string {
  if (stream.error !== "") return `unreadable: ${stream.error}`;
  const problems: string[] = [];
  if (stream.replicas > 1 && stream.leader === "") problems.push("no leader");
  for (const peer of stream.peers) {
    if (peer.offline) problems.push(`${peer.name} offline`);
    else if (!peer.current)
      problems.push(`${peer.name} behind by ${String(peer.lag)}`);
  }
  return problems.length === 0 ? "healthy" : problems.join(", ");
}

function healthCell(stream: wire.HubStream__Output, style: Style): string {
  const health = streamHealth(stream);
  return health === "healthy" ? style.green(health) : style.red(health);
}

/** The lines of `flotilla hub status`. */
export function hubStatusLines(
  status: wire.GetHubStatusResponse__Output,
  nowMs: number,
  style: Style,
): string[] {
  const lines = [
    `Answered by replica ${status.replica}; ${String(status.replicas.length)} live replica(s).`,
    "",
    ...renderTable(
      [
        { header: "ID", cell: (r: wire.HubReplica__Output) => r.id },
        { header: "ADDRESS", cell: (r) => r.address },
        { header: "VERSION", cell: (r) => r.version },
        {
          header: "UP SINCE",
          cell: (r) => formatAgo(r.startedAtMs, nowMs),
        },
        {
          header: "SESSIONS",
          cell: (r) => String(r.sessions),
          align: "right",
        },
        { header: "LEASES", cell: (r) => leasesCell(r.leases) },
        {
          header: "ELIGIBLE",
          cell: (r) => (r.eligible ? "yes" : style.red("no")),
        },
        { header: "SEEN", cell: (r) => formatAgo(r.seenAtMs, nowMs) },
      ],
      status.replicas,
      style,
    ),
    "",
  ];
  if (status.streams.length === 0) {
    lines.push("No JetStream streams: this hub keeps its state elsewhere.");
    return lines;
  }
  lines.push(
    ...renderTable(
      [
        { header: "STREAM", cell: (s: wire.HubStream__Output) => s.name },
        { header: "WHAT", cell: (s) => s.label },
        {
          header: "REPLICAS",
          cell: (s) => (s.error === "" ? String(s.replicas) : "-"),
          align: "right",
        },
        { header: "LEADER", cell: (s) => (s.leader === "" ? "-" : s.leader) },
        {
          header: "PEERS",
          cell: (s) =>
            s.peers.length === 0 ? "-" : s.peers.map((p) => p.name).join(","),
        },
        { header: "HEALTH", cell: (s) => healthCell(s, style) },
      ],
      status.streams,
      style,
    ),
  );
  return lines;
}
