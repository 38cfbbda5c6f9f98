/** A text progress bar: `[██████░░░░]`. */

/** Default number of cells inside the brackets. */
export const BAR_WIDTH = 20;

/** A bar of `cells` cells with `done` of `total` filled; rounds down so a bar is full only when done. */
export function progressBar(
  done: number,
  total: number,
  cells = BAR_WIDTH,
): string {
  const ratio = total <= 0 ? 0 : Math.min(Math.max(done / total, 0), 1);
  let filled = Math.floor(ratio * cells);
  // Any progress at all shows at least one cell.
  if (filled === 0 && done > 0 && total > 0) filled = Math.min(1, cells);
  return `[${"█".repeat(filled)}${"░".repeat(cells - filled)}]`;
}
