/**
 * `flotilla strategy create|update|get|list|delete`: stored AKS update strategies, written in YAML
 * or JSON and sent exactly as written (the hub validates them with core's parser, so its problem
 * paths are paths in the file).
 */
import { formatProblem, ok, type Result } from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import { stringify } from "yaml";
import { loadDocument } from "../input.js";
import { EXIT_OK, type CliIo } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  type AdminContext,
} from "../hub/admin-command.js";
import { present } from "../hub/answer.js";
import { fileProblemLines } from "../hub/file-problems.js";
import { EXPECTED_REVISION_OPTION } from "../hub/options.js";
import { printJson, printLines } from "../hub/output.js";
import { listAll } from "../hub/pages.js";
import { warningLines } from "../render/sections.js";
import { renderTable, type Column } from "../render/table.js";
import { formatAgo, formatInstant } from "../render/time.js";
import { expectedRevision } from "./cluster.js";
import type {
  Noun,
  OptionSpec,
  ParsedArgs,
  PositionalSpec,
} from "./command.js";

const NAME: PositionalSpec = {
  name: "NAME",
  description: "the strategy's name",
};

/** `-f FILE` of commands that send a strategy. */
export const STRATEGY_FILE_OPTION: OptionSpec = {
  type: "string",
  short: "f",
  valueName: "FILE",
  description: "an AKS update strategy, {stages: [...]} (YAML or JSON)",
};

/** The file's document as the JSON the hub expects, or its syntax errors (`FILE:LINE:COL: …`). */
export async function readStrategyFile(
  io: CliIo,
  file: string,
): Promise<Result<string>> {
  const loaded = await loadDocument(io, file);
  return loaded.ok ? ok(JSON.stringify(loaded.value)) : loaded;
}

/** The stages of a stored strategy, for lists (0 when its JSON is not a strategy). */
function stageCount(strategyJson: string): number {
  try {
    const value = JSON.parse(strategyJson) as { stages?: unknown };
    return Array.isArray(value.stages) ? value.stages.length : 0;
  } catch {
    return 0;
  }
}

function printSaved(
  ctx: AdminContext,
  answer: {
    strategy: wire.UpdateStrategy__Output | null;
    warnings: wire.Warning__Output[];
  },
  verb: string,
): void {
  if (ctx.json) {
    printJson(ctx.io, answer);
    return;
  }
  const strategy = present(answer.strategy, "strategy");
  printLines(ctx.io, [
    `Strategy ${strategy.name} ${verb} (revision ${String(strategy.revision)}, ${String(stageCount(strategy.strategyJson))} stages).`,
    ...warningLines(answer.warnings, ctx.render),
  ]);
}

/** Reads `-f FILE` (and `--expected-revision` for updates) before connecting. */
function fileInput(command: string, withRevision: boolean) {
  return async (args: ParsedArgs, io: CliIo) => {
    const file = args.string("file") ?? "";
    const revision = withRevision ? expectedRevision(command, args) : ok(0);
    const strategy = await readStrategyFile(io, file);
    const messages = [
      ...(revision.ok ? [] : revision.problems.map(formatProblem)),
      ...(strategy.ok ? [] : strategy.problems.map(formatProblem)),
    ];
    if (!revision.ok || !strategy.ok) return refused(messages);
    return prepared({
      name: args.positional("NAME") ?? "",
      file,
      strategyJson: strategy.value,
      expectedRevision: revision.value,
    });
  };
}

const create = adminCommand({
  name: "strategy create",
  summary: "store an update strategy under a name",
  description:
    "Stores an AKS update strategy (stages, groups, limits, gates) that runs and bundles refer to\n" +
    "by name. Problems are reported as FILE: PATH: MESSAGE, with the path inside the file.",
  positionals: [NAME],
  options: { file: { ...STRATEGY_FILE_OPTION, required: true } },
  mutating: true,
  prepare: fileInput("strategy create", false),
  run: async (ctx, input) => {
    ctx.problemLines(
      fileProblemLines(input.file, ["strategyJson", "strategy"]),
    );
    const answer = await ctx.hub.call("createUpdateStrategy", {
      name: input.name,
      strategyJson: input.strategyJson,
      reason: ctx.reason,
    });
    printSaved(ctx, answer, "created");
    return EXIT_OK;
  },
});

const update = adminCommand({
  name: "strategy update",
  summary: "replace a stored update strategy",
  description:
    "Replaces the strategy; runs already created keep the copy they were created with.",
  positionals: [NAME],
  options: {
    file: { ...STRATEGY_FILE_OPTION, required: true },
    ...EXPECTED_REVISION_OPTION,
  },
  mutating: true,
  prepare: fileInput("strategy update", true),
  run: async (ctx, input) => {
    ctx.problemLines(
      fileProblemLines(input.file, ["strategyJson", "strategy"]),
    );
    const answer = await ctx.hub.call("updateUpdateStrategy", {
      name: input.name,
      strategyJson: input.strategyJson,
      expectedRevision: input.expectedRevision,
      reason: ctx.reason,
    });
    printSaved(ctx, answer, "updated");
    return EXIT_OK;
  },
});

const get = adminCommand({
  name: "strategy get",
  summary: "show a stored update strategy",
  description: "Shows the strategy as YAML, exactly as it was stored.",
  positionals: [NAME],
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const answer = await ctx.hub.call("getUpdateStrategy", { name });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const strategy = present(answer.strategy, "strategy");
    let body: string;
    try {
      body = stringify(JSON.parse(strategy.strategyJson)).trimEnd();
    } catch {
      body = strategy.strategyJson;
    }
    printLines(ctx.io, [
      `# Strategy ${strategy.name} · revision ${String(strategy.revision)} · updated ${formatInstant(strategy.updatedAtMs)}`,
      body,
    ]);
    return EXIT_OK;
  },
});

const list = adminCommand({
  name: "strategy list",
  summary: "list the stored update strategies",
  description: "Lists every stored strategy with its number of stages.",
  prepare: () => prepared(undefined),
  run: async (ctx) => {
    const strategies = await listAll(async (pageToken) => {
      const page = await ctx.hub.call("listUpdateStrategies", { pageToken });
      return { items: page.strategies, nextPageToken: page.nextPageToken };
    });
    if (ctx.json) printJson(ctx.io, { strategies });
    else if (strategies.length === 0) printLines(ctx.io, ["No strategies."]);
    else {
      const nowMs = ctx.io.now();
      const columns: Column<wire.UpdateStrategy__Output>[] = [
        { header: "NAME", cell: (s) => s.name },
        {
          header: "STAGES",
          cell: (s) => String(stageCount(s.strategyJson)),
          align: "right",
        },
        { header: "REVISION", cell: (s) => String(s.revision), align: "right" },
        { header: "UPDATED", cell: (s) => formatAgo(s.updatedAtMs, nowMs) },
      ];
      printLines(ctx.io, renderTable(columns, strategies, ctx.render.style));
    }
    return EXIT_OK;
  },
});

const remove = adminCommand({
  name: "strategy delete",
  summary: "delete a stored update strategy",
  description: "Deletes the strategy; runs created from it keep their copy.",
  positionals: [NAME],
  mutating: true,
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const answer = await ctx.hub.call("deleteUpdateStrategy", {
      name,
      reason: ctx.reason,
    });
    if (ctx.json) printJson(ctx.io, answer);
    else printLines(ctx.io, [`Strategy ${name} deleted.`]);
    return EXIT_OK;
  },
});

/** `flotilla strategy …`. */
export const strategyNoun: Noun = {
  name: "strategy",
  summary: "store, inspect and delete update strategies",
  verbs: [create, update, get, list, remove],
};
