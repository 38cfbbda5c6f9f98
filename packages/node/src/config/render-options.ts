/**
 * Usage text of an option table: one entry per option, `--flag ARG` padded to a column, then its
 * help, its default and its variable. Help lines after the first are indented to the column.
 * Options with a group are listed under `Group:` headings, a blank line between groups.
 */
import type { OptionSpec, OptionTable } from "./option-table.js";

/** How {@link renderOptions} lays out its lines; every field has a default. */
export interface RenderSettings {
  /** Width of the flag column, its two leading spaces included (default 34). */
  readonly column?: number;
  /** Show one-letter aliases before the flag, `-h, --help` (default: not shown). */
  readonly short?: boolean;
  /** Spaces between a flag wider than the column and its help (default 1). */
  readonly overflowGap?: number;
  /** Append `(default X)` and `[ENV]` to the help (default true). */
  readonly defaultsAndEnv?: boolean;
}

/** The usage lines of `table`, in table order. */
export function renderOptions(
  table: OptionTable,
  settings: RenderSettings = {},
): string[] {
  const column = settings.column ?? 34;
  const lines: string[] = [];
  let group: string | undefined;
  for (const spec of Object.values(table)) {
    if (spec.group !== undefined && spec.group !== group) {
      if (group !== undefined) lines.push("");
      lines.push(`${spec.group}:`);
      group = spec.group;
    }
    const [first = "", ...rest] = helpText(spec, settings).split("\n");
    const flag = flagText(spec, settings);
    const gap =
      flag.length > column ? " ".repeat(settings.overflowGap ?? 1) : " ";
    lines.push(`${flag.padEnd(column)}${gap}${first}`);
    for (const line of rest) lines.push(`${" ".repeat(column + 1)}${line}`);
  }
  return lines;
}

function flagText(spec: OptionSpec<unknown>, settings: RenderSettings): string {
  const short =
    settings.short === true && spec.short !== undefined
      ? `${spec.short}, `
      : "";
  const arg = spec.arg === undefined ? "" : ` ${spec.arg}`;
  return `  ${short}${spec.flag}${arg}`;
}

function helpText(spec: OptionSpec<unknown>, settings: RenderSettings): string {
  if (settings.defaultsAndEnv === false) return spec.help;
  const fallback =
    spec.default === undefined ? "" : ` (default ${spec.default})`;
  const env = spec.env === undefined ? "" : ` [${spec.env}]`;
  return `${spec.help}${fallback}${env}`;
}
