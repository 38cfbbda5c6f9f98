/**
 * Sections that `plan` and `simulate` both print: unassigned clusters and warnings.
 */
import type { RenderOptions } from "./options.js";
import type { PlanWarning } from "./preview-types.js";
import { DEFAULT_MAX_LINES, labelledList, wrapWords } from "./wrap.js";

/** `Unassigned (N): a, b, …`: clusters no partition or group takes, which are not updated. */
export function unassignedLines(
  unassigned: readonly string[],
  options: RenderOptions,
): string[] {
  if (unassigned.length === 0) return [];
  const label = `Unassigned (${String(unassigned.length)}): `;
  const lines = labelledList(label, unassigned, {
    width: options.width,
    ...(options.all ? {} : { maxLines: DEFAULT_MAX_LINES }),
  });
  return lines.map((line, i) =>
    i === 0 ? options.style.yellow(label) + line.slice(label.length) : line,
  );
}

/** The warnings section: `! message (CODE)` for each, wrapped under the message. */
export function warningLines(
  warnings: readonly PlanWarning[],
  options: RenderOptions,
): string[] {
  if (warnings.length === 0) return [];
  const { style } = options;
  const lines = ["Warnings:"];
  for (const w of warnings) {
    const code = `(${w.code})`;
    const text = wrapWords(`${w.message} ${code}`, options.width - 4);
    text.forEach((line, i) => {
      // The code is the last word; dim it where it landed.
      const shown =
        i === text.length - 1 && line.endsWith(code)
          ? line.slice(0, -code.length) + style.dim(code)
          : line;
      lines.push(i === 0 ? `  ${style.yellow("!")} ${shown}` : `    ${shown}`);
    });
  }
  return lines;
}
