/**
 * Laying out lists of names (clusters) in a width, with an optional cap on lines so a 2,000-cluster
 * group does not flood the screen.
 */

/** How to lay out a list. */
export interface WrapOptions {
  /** Columns available on every line. */
  readonly width: number;
  /** Columns available on the first line when it starts after a label (defaults to `width`). */
  readonly firstWidth?: number;
  /** At most this many lines of names; the rest is summarised as "… and N more". Unlimited if absent. */
  readonly maxLines?: number;
  readonly separator?: string;
  /** End every line but the last with the separator's visible part (the comma); default true. */
  readonly markContinuation?: boolean;
}

/** Lines shown per list before "… and N more" unless the user asks for `--all`. */
export const DEFAULT_MAX_LINES = 3;

/** Greedy word wrap of `items` joined by `separator` (", "): an item never splits across lines. */
export function wrapList(
  items: readonly string[],
  options: WrapOptions,
): string[] {
  const separator = options.separator ?? ", ";
  const trimmed = options.markContinuation === false ? "" : separator.trimEnd();
  const lines: string[][] = [];
  let current: string[] = [];
  let length = 0;
  for (const item of items) {
    const limit =
      lines.length === 0
        ? (options.firstWidth ?? options.width)
        : options.width;
    // Every line but the last ends with the separator's non-space part (the comma).
    const added =
      current.length === 0 ? item.length : separator.length + item.length;
    if (current.length > 0 && length + added + trimmed.length > limit) {
      lines.push(current);
      current = [item];
      length = item.length;
    } else {
      current.push(item);
      length += added;
    }
  }
  if (current.length > 0) lines.push(current);

  const text = (line: readonly string[], isLast: boolean): string =>
    line.join(separator) + (isLast ? "" : trimmed);
  const max = options.maxLines;
  // Hiding a single line would only swap it for the "… and N more" line.
  if (max === undefined || lines.length <= max + 1) {
    return lines.map((line, i) => text(line, i === lines.length - 1));
  }
  const kept = lines.slice(0, Math.max(max, 1));
  const shown = kept.reduce((sum, line) => sum + line.length, 0);
  return [
    ...kept.map((line) => text(line, false)),
    `… and ${String(items.length - shown)} more`,
  ];
}

/** `label` followed by the wrapped list; continuation lines are indented by `indent` spaces. */
export function labelledList(
  label: string,
  items: readonly string[],
  options: Omit<WrapOptions, "firstWidth"> & { readonly indent?: number },
): string[] {
  const { indent = 2, ...wrap } = options;
  const lines = wrapList(items, {
    ...wrap,
    width: options.width - indent,
    firstWidth: options.width - label.length,
  });
  return lines.map((line, i) =>
    i === 0 ? label + line : " ".repeat(indent) + line,
  );
}

/** Word wrap of running text; a word longer than the width gets a line of its own. */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines;
}
