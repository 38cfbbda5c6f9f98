/**
 * The simulation timeline for people: one row per entry with its offset from the start, its type,
 * its scope (group, or wave) and its message. Member entries of the same kind at the same instant
 * are folded into one row listing the clusters, so the batches of a rollout are visible.
 */
import { formatOffset, secondsBetween } from "./duration.js";
import type { RenderOptions } from "./options.js";
import type { TimelineEntry } from "./preview-types.js";
import type { Style } from "./style.js";
import { DEFAULT_MAX_LINES, wrapList, wrapWords } from "./wrap.js";

/** A row to print: one entry that is not about a member, or one or more member entries alike. */
export type TimelineRow =
  | { readonly kind: "entry"; readonly entry: TimelineEntry }
  | {
      readonly kind: "members";
      /** The first of the folded entries; they share at, type, wave, group and message. */
      readonly entry: TimelineEntry;
      readonly clusters: readonly string[];
    };

function isMemberEntry(
  entry: TimelineEntry,
): entry is TimelineEntry & { cluster: string } {
  return entry.cluster !== undefined;
}

function foldKey(entry: TimelineEntry): string {
  return JSON.stringify([
    entry.type,
    entry.wave ?? null,
    entry.group ?? null,
    entry.message,
  ]);
}

/**
 * Folds each run of consecutive member entries at the same instant: entries alike (same type,
 * wave, group and message) become one row, in order of first appearance. Entries that are not
 * about a member (run, stage, group, gate, partition) are kept in place and end a run, so the
 * order of cause and effect is preserved.
 */
export function foldTimeline(entries: readonly TimelineEntry[]): TimelineRow[] {
  const rows: TimelineRow[] = [];
  let index = 0;
  while (index < entries.length) {
    const first = entries[index];
    if (first === undefined) break;
    if (!isMemberEntry(first)) {
      rows.push({ kind: "entry", entry: first });
      index++;
      continue;
    }
    const batches = new Map<
      string,
      { entry: TimelineEntry; clusters: string[] }
    >();
    for (
      let e = entries[index];
      e !== undefined && isMemberEntry(e) && e.at === first.at;
      e = entries[++index]
    ) {
      const key = foldKey(e);
      const batch = batches.get(key);
      if (batch === undefined)
        batches.set(key, { entry: e, clusters: [e.cluster] });
      else batch.clusters.push(e.cluster);
    }
    for (const batch of batches.values())
      rows.push({ kind: "members", ...batch });
  }
  return rows;
}

/** The scope an entry belongs to: its group, else its wave (Fleet partitions have both, equal). */
export function scopeOf(entry: TimelineEntry): string {
  return entry.group ?? entry.wave ?? "";
}

const RED_TYPES = new Set([
  "failed",
  "notReady",
  "errApplied",
  "offline",
  "rejected",
]);
const GREEN_TYPES = new Set(["succeeded", "ready", "online"]);
const YELLOW_TYPES = new Set(["gate", "pending", "held", "warning"]);
const CYAN_TYPES = new Set(["released", "started"]);
const DIM_TYPES = new Set(["skipped", "queued"]);

/** Colours a timeline type by what it means (the types core emits; others stay plain). */
function styleType(style: Style, type: string, padded: string): string {
  if (RED_TYPES.has(type)) return style.red(padded);
  if (GREEN_TYPES.has(type)) return style.green(padded);
  if (YELLOW_TYPES.has(type)) return style.yellow(padded);
  if (CYAN_TYPES.has(type)) return style.cyan(padded);
  if (DIM_TYPES.has(type)) return style.dim(padded);
  return padded;
}

const MAX_TYPE_WIDTH = 12;
const MAX_SCOPE_WIDTH = 16;

/** Renders the timeline rows, offsets measured from `start`. */
export function renderTimeline(
  entries: readonly TimelineEntry[],
  start: string,
  options: RenderOptions,
): string[] {
  const rows = foldTimeline(entries);
  const offsets = rows.map((row) =>
    formatOffset(secondsBetween(start, row.entry.at)),
  );
  const offsetWidth = Math.max(0, ...offsets.map((o) => o.length));
  const typeWidth = Math.min(
    MAX_TYPE_WIDTH,
    Math.max(0, ...rows.map((row) => row.entry.type.length)),
  );
  const scopeWidth = Math.min(
    MAX_SCOPE_WIDTH,
    Math.max(0, ...rows.map((row) => scopeOf(row.entry).length)),
  );
  const indent =
    2 +
    offsetWidth +
    2 +
    typeWidth +
    2 +
    (scopeWidth === 0 ? 0 : scopeWidth + 2);
  const textWidth = Math.max(options.width - indent, 24);

  const lines: string[] = [];
  rows.forEach((row, i) => {
    const { type, message } = row.entry;
    const scope = scopeOf(row.entry);
    const head =
      `  ${(offsets[i] ?? "").padEnd(offsetWidth)}  ${styleType(options.style, type, type.padEnd(typeWidth))}  ` +
      (scopeWidth === 0 ? "" : `${scope.padEnd(scopeWidth)}  `);
    let text: string[];
    if (row.kind === "entry") {
      text = wrapWords(message, textWidth);
    } else {
      // "Started"/"Succeeded" only repeat the type; other messages say something and lead the list.
      const label =
        message.toLowerCase() === type.toLowerCase() ? "" : `${message}: `;
      const labelFits =
        label.length + (row.clusters[0]?.length ?? 0) <= textWidth;
      const list = wrapList(row.clusters, {
        width: textWidth,
        firstWidth: labelFits ? textWidth - label.length : textWidth,
        ...(options.all ? {} : { maxLines: DEFAULT_MAX_LINES }),
      });
      text = labelFits
        ? list.map((l, j) => (j === 0 ? label + l : l))
        : [...wrapWords(label.trimEnd(), textWidth), ...list];
    }
    text.forEach((line, j) =>
      lines.push(j === 0 ? head + line : " ".repeat(indent) + line),
    );
  });
  return lines;
}
