/**
 * `flotilla run status NAME [--watch]`: the run as a tree; with --watch, follows WatchUpdateRun
 * (a snapshot, then changes) until the run ends. On a terminal the tree is redrawn in place; piped,
 * the tree is printed once and then one line per transition. The exit code says how it ended:
 * 0 Completed (or Skipped), 1 Failed or Stopped, 3 when the hub goes away first.
 */
import { FlotillaError, isRunFinished } from "@flotilla/core";
import type { RunView, wire } from "@flotilla/protocol";
import { EXIT_ERROR, EXIT_OK, EXIT_UNREACHABLE } from "../io.js";
import {
  adminCommand,
  prepared,
  type AdminContext,
} from "../hub/admin-command.js";
import { printJson, printJsonLine, printLines } from "../hub/output.js";
import {
  applyRunChange,
  changeTransitions,
  transitionLine,
} from "../render/run-change.js";
import {
  renderRunStatus,
  stateLine,
  type RunRenderOptions,
} from "../render/run-tree.js";
import { decodeRun } from "./run-decode.js";

/** Clears a terminal and moves the cursor home, for redrawing in place. */
const CLEAR_SCREEN = "\u001b[H\u001b[2J";

function runOptions(ctx: AdminContext): RunRenderOptions {
  return {
    ...ctx.render,
    all: ctx.args.flag("members"),
    members: ctx.args.flag("members"),
    nowMs: ctx.io.now(),
  };
}

/** The exit code for a run that ended in `state`. */
function exitFor(run: RunView): number {
  return run.state === "Failed" || run.state === "Stopped"
    ? EXIT_ERROR
    : EXIT_OK;
}

async function watch(ctx: AdminContext, name: string): Promise<number> {
  const tty = ctx.io.isTTY && !ctx.json;
  let run: RunView | undefined;
  const draw = (): void => {
    if (run === undefined) return;
    const lines = renderRunStatus(run, runOptions(ctx));
    ctx.io.stdout(
      tty ? `${CLEAR_SCREEN}${lines.join("\n")}\n` : `${lines.join("\n")}\n`,
    );
  };
  try {
    const events = ctx.hub.stream<wire.WatchUpdateRunResponse__Output>(
      (admin, metadata) => admin.watchUpdateRun({ name }, metadata),
    );
    for await (const event of events) {
      if (ctx.json) printJsonLine(ctx.io, event);
      if (event.snapshot != null) {
        run = decodeRun(event.snapshot);
        if (!ctx.json) draw();
      } else if (event.change != null && run !== undefined) {
        applyRunChange(run, event.change);
        if (tty) draw();
        else if (!ctx.json)
          printLines(
            ctx.io,
            changeTransitions(event.change).map((t) =>
              transitionLine(t, ctx.render.style),
            ),
          );
      }
      if (run !== undefined && isRunFinished(run.state)) break;
    }
  } catch (error) {
    // Losing the hub mid-watch: say so plainly (the generic report would blame the address).
    if (
      run === undefined ||
      !(error instanceof FlotillaError) ||
      error.code !== "unavailable"
    )
      throw error;
    ctx.io.stderr(
      `flotilla: lost the hub at ${ctx.hub.address} while watching run ${name}: ${error.message}\n`,
    );
    return EXIT_UNREACHABLE;
  }
  if (run === undefined || !isRunFinished(run.state)) {
    ctx.io.stderr(
      `flotilla: the hub ended the watch of run ${name} before the run finished\n`,
    );
    return EXIT_UNREACHABLE;
  }
  if (!tty && !ctx.json) printLines(ctx.io, [stateLine(run, ctx.render)]);
  return exitFor(run);
}

/** `flotilla run status`. */
export const runStatusCommand = adminCommand({
  name: "run status",
  summary:
    "show a run as a tree of stages, groups and members; --watch follows it",
  description: [
    "Shows the run's stages, groups and members with their states, progress, failure counts",
    "against budgets, gates (a pending one with the command that completes it) and waits.",
    `Groups with more than 20 members are folded into counts per state unless --members is given.`,
    "With --watch, follows the run until it ends: exit 0 when it Completed, 1 when it Failed or",
    "was Stopped, 3 when the hub goes away. With -o json and --watch, one JSON event per line.",
  ].join("\n"),
  positionals: [{ name: "NAME", description: "the run's name" }],
  options: {
    watch: {
      type: "boolean",
      short: "w",
      description: "follow the run until it ends",
    },
    members: {
      type: "boolean",
      description: "list every member, even in large groups",
    },
  },
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    if (ctx.args.flag("watch")) return watch(ctx, name);
    const answer = await ctx.hub.call("getUpdateRun", { name });
    if (ctx.json) printJson(ctx.io, answer);
    else
      printLines(
        ctx.io,
        renderRunStatus(decodeRun(answer.run), {
          ...runOptions(ctx),
          owner: answer.ownerReplica,
        }),
      );
    return EXIT_OK;
  },
});
