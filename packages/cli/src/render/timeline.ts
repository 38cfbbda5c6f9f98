/**
 * The simulation timeline for people: one row per entry with its offset from the start, and
 * same-instant releases folded into one row per wave/group so the batches are visible.
 */
import { formatOffset, secondsBetween } from "./duration.js";
import type { RenderOptions } from "./options.js";
import type { TimelineEntry } from "./preview-types.js";
import type { Style } from "./style.js";
import { DEFAULT_MAX_LINES, wrapList } from "./wrap.js";

/** A row to print: one entry, or a batch of releases at the same instant in the same wave and group. */
export type TimelineRow =
  | { readonly kind: "entry"; readonly entry: TimelineEntry }
  | {
      readonly kind: "batch";
      readonly at: string;
      readonly wave?: string;
      readonly group?: string;
      readonly clusters: readonly string[];
    };

const RELEASED = "released";

function isRelease(entry: TimelineEntry): entry is TimelineEntry & { cluster: string } {
  return entry.type === RELEASED && entry.cluster !== undefined;
}

/** Folds runs of consecutive `released` entries with the same `at`, one batch per (wave, group). */
export function foldTimeline(entries: readonly TimelineEntry[]): TimelineRow[] {
  const rows: TimelineRow[] = [];
  let index = 0;
  while (index < entries.length) {
    const first = entries[index];
    if (first === undefined) break;
    if (!isRelease(first)) {
      rows.push({ kind: "entry", entry: first });
      index++;
      continue;
    }
    const run: (TimelineEntry & { cluster: string })[] = [];
    for (let e = entries[index]; e !== undefined && isRelease(e) && e.at === first.at; e = entries[++index]) {
      run.push(e);
    }
    // Groups of a stage release in parallel; keep each group's batch together, in order of appearance.
    const batches = new Map<string, (TimelineEntry & { cluster: string })[]>();
    for (const e of run) {
      const key = JSON.stringify([e.wave ?? null, e.group ?? null]);
      const batch = batches.get(key);
      if (batch === undefined) batches.set(key, [e]);
      else batch.push(e);
    }
    for (const batch of batches.values()) {
      const [head] = batch;
      if (head === undefined) continue;
      if (batch.length === 1) rows.push({ kind: "entry", entry: head });
      else {
        rows.push({
          kind: "batch",
          at: head.at,
          ...(head.wave === undefined ? {} : { wave: head.wave }),
          ...(head.group === undefined ? {} : { group: head.group }),
          clusters: batch.map((e) => e.cluster),
        });
      }
    }
  }
  return rows;
}

/** `wave/group`, or whichever is set; a Fleet partition's group has the wave's name. */
export function scopeName(wave: string | undefined, group: string | undefined): string | undefined {
  if (wave !== undefined && group !== undefined && wave !== group) return `${wave}/${group}`;
  return wave ?? group;
}

function styleType(style: Style, type: string, padded: string): string {
  const lower = type.toLowerCase();
  if (lower.includes("fail") || lower.includes("notready") || lower.includes("timedout")) return style.red(padded);
  if (lower.includes("succeed") || lower.includes("ready") || lower.includes("complete")) return style.green(padded);
  if (lower.includes("gate") || lower.includes("approv") || lower.includes("pending") || lower.includes("wait")) {
    return style.yellow(padded);
  }
  if (type === RELEASED) return style.cyan(padded);
  return padded;
}

const MAX_TYPE_WIDTH = 20;

/** Renders the timeline rows, offsets measured from `start`. */
export function renderTimeline(entries: readonly TimelineEntry[], start: string, options: RenderOptions): string[] {
  const rows = foldTimeline(entries);
  const at = (row: TimelineRow): string => (row.kind === "entry" ? row.entry.at : row.at);
  const type = (row: TimelineRow): string => (row.kind === "entry" ? row.entry.type : RELEASED);
  const offsets = rows.map((row) => formatOffset(secondsBetween(start, at(row))));
  const offsetWidth = Math.max(0, ...offsets.map((o) => o.length));
  const typeWidth = Math.min(MAX_TYPE_WIDTH, Math.max(0, ...rows.map((row) => type(row).length)));
  const indent = 2 + offsetWidth + 2 + typeWidth + 2;

  const lines: string[] = [];
  rows.forEach((row, i) => {
    const head = `  ${(offsets[i] ?? "").padEnd(offsetWidth)}  ${styleType(options.style, type(row), type(row).padEnd(typeWidth))}  `;
    if (row.kind === "entry") {
      lines.push(head + row.entry.message);
      return;
    }
    const scope = scopeName(row.wave, row.group);
    const label = `${String(row.clusters.length)} clusters${scope === undefined ? "" : ` in ${scope}`}: `;
    const listWidth = Math.max(options.width - indent, 20);
    const wrapped = wrapList(row.clusters, {
      width: listWidth,
      firstWidth: Math.max(listWidth - label.length, 10),
      ...(options.all ? {} : { maxLines: DEFAULT_MAX_LINES }),
    });
    wrapped.forEach((line, j) => lines.push(j === 0 ? head + label + line : " ".repeat(indent) + line));
  });
  return lines;
}
