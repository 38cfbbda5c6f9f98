/**
 * Sections that `plan` and `simulate` both print: unassigned clusters and warnings.
 */
import type { RenderOptions } from "./options.js";
import type { PlanWarning } from "./preview-types.js";
import type { Style } from "./style.js";
import { DEFAULT_MAX_LINES, labelledList } from "./wrap.js";

/** `Unassigned (N): a, b, …`: clusters no partition or group takes, which are not updated. */
export function unassignedLines(unassigned: readonly string[], options: RenderOptions): string[] {
  if (unassigned.length === 0) return [];
  const label = `Unassigned (${String(unassigned.length)}): `;
  const lines = labelledList(label, unassigned, {
    width: options.width,
    ...(options.all ? {} : { maxLines: DEFAULT_MAX_LINES }),
  });
  return lines.map((line, i) => (i === 0 ? options.style.yellow(label) + line.slice(label.length) : line));
}

/** The warnings section, one `! message (CODE)` line each. */
export function warningLines(warnings: readonly PlanWarning[], style: Style): string[] {
  if (warnings.length === 0) return [];
  return ["Warnings:", ...warnings.map((w) => `  ${style.yellow("!")} ${w.message} ${style.dim(`(${w.code})`)}`)];
}
