/**
 * Aligned tables for list commands, kubectl-style: upper-case headers, columns two spaces apart,
 * the last column not padded. Cells may be coloured; widths count only visible characters.
 */
import type { Style } from "./style.js";
import { visibleLength } from "./style.js";

/** One column: its header and how a row shows in it. */
export interface Column<R> {
  readonly header: string;
  readonly cell: (row: R) => string;
  /** Numbers read better right-aligned. */
  readonly align?: "right";
}

function pad(text: string, width: number, align: "left" | "right"): string {
  const fill = " ".repeat(Math.max(0, width - visibleLength(text)));
  return align === "right" ? fill + text : text + fill;
}

/** The table's lines (header first), without a trailing newline. */
export function renderTable<R>(
  columns: readonly Column<R>[],
  rows: readonly R[],
  style: Style,
): string[] {
  const cells = rows.map((row) => columns.map((c) => c.cell(row)));
  const widths = columns.map((c, i) =>
    Math.max(c.header.length, ...cells.map((r) => visibleLength(r[i] ?? ""))),
  );
  const line = (values: readonly string[]): string =>
    values
      .map((v, i) => {
        const last = i === values.length - 1;
        const align = columns[i]?.align ?? "left";
        return last && align === "left" ? v : pad(v, widths[i] ?? 0, align);
      })
      .join("  ")
      // An empty last cell would leave the padding of the one before it.
      .trimEnd();
  return [
    style.bold(line(columns.map((c) => c.header))),
    ...cells.map((r) => line(r)),
  ];
}

/** `k=v,k2=v2` in key order, or `<none>`. */
export function formatLabels(labels: Readonly<Record<string, string>>): string {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return "<none>";
  return keys.map((k) => `${k}=${labels[k] ?? ""}`).join(",");
}
