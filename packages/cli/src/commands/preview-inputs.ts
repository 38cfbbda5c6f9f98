/**
 * What `plan` and `simulate` share: their file options, loading the files, and printing core's
 * input problems against the file each came from.
 */
import { formatProblem, formatProblems } from "@flotilla/core";
import type { InputProblem } from "@flotilla/core";
import type { ParsedArgs } from "./command.js";
import { loadDocuments } from "../input.js";
import { outputWidth, useColor, type CliIo } from "../io.js";
import type { RenderOptions } from "../render/options.js";
import { createStyle } from "../render/style.js";
import type { OptionSpec } from "./command.js";

/** Options both preview commands take. */
export const PREVIEW_OPTIONS = {
  clusters: {
    type: "string",
    valueName: "FILE",
    required: true,
    description: "clusters file (YAML or JSON list)",
  },
  strategy: {
    type: "string",
    valueName: "FILE",
    required: true,
    description:
      "fleet.yaml, a rolloutStrategy, or an AKS update strategy (YAML or JSON)",
  },
  "cluster-groups": {
    type: "string",
    valueName: "FILE",
    description: "cluster groups file (YAML or JSON list)",
  },
  output: {
    type: "string",
    short: "o",
    choices: ["table", "json"],
    description: "output format (default table)",
  },
  all: {
    type: "boolean",
    description: 'list every cluster instead of "… and N more"',
  },
} as const satisfies Record<string, OptionSpec>;

/** The input files a preview reads, keyed by core's `InputProblem.source`. */
export type PreviewFiles = Partial<Record<InputProblem["source"], string>>;

/** The files named on the command line (the scenario only for simulate). */
export function previewFiles(
  args: ParsedArgs,
  withScenario: boolean,
): PreviewFiles {
  const files: PreviewFiles = {};
  const set = (key: InputProblem["source"], option: string): void => {
    const file = args.string(option);
    if (file !== undefined) files[key] = file;
  };
  set("clusters", "clusters");
  set("clusterGroups", "cluster-groups");
  set("strategy", "strategy");
  if (withScenario) set("scenario", "scenario");
  return files;
}

/** Loads every file; on failure prints every problem and resolves to undefined. */
export async function loadPreviewFiles(
  io: CliIo,
  files: PreviewFiles,
): Promise<Partial<Record<InputProblem["source"], unknown>> | undefined> {
  const loaded = await loadDocuments(io, files);
  if (loaded.ok) return loaded.value;
  io.stderr(`${formatProblems(loaded.problems)}\n`);
  return undefined;
}

/** `FILE: PATH: MESSAGE (got VALUE)`, FILE being the file given for the problem's source. */
export function problemLine(
  problem: InputProblem,
  files: PreviewFiles,
): string {
  const file = files[problem.source] ?? `<${problem.source}>`;
  return `${file}: ${formatProblem(problem)}`;
}

/** Prints core's input problems, one line each, to stderr. */
export function printProblems(
  io: CliIo,
  problems: readonly InputProblem[],
  files: PreviewFiles,
): void {
  io.stderr(`${problems.map((p) => problemLine(p, files)).join("\n")}\n`);
}

/** The object exactly as core returned it: 2-space JSON and a trailing newline. */
export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Layout and colour for human output, from the terminal and the `--all` flag. */
export function renderOptions(io: CliIo, args: ParsedArgs): RenderOptions {
  return {
    width: outputWidth(io),
    style: createStyle(useColor(io)),
    all: args.flag("all"),
  };
}
