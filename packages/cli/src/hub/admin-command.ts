/**
 * How an admin command is built: declare its arguments, check the input locally (exit 2 before any
 * connection), then talk to the hub with one client that is always closed. The shared options
 * (hub connection, `-o`, `--reason`) are added here so every command spells them the same way.
 */
import {
  FlotillaError,
  compact,
  fail,
  formatProblem,
  ok,
  problem,
  type Problem,
  type Result,
} from "@flotilla/core";
import type {
  Command,
  OptionSpec,
  ParsedArgs,
  PositionalSpec,
} from "../commands/command.js";
import { EXIT_USAGE, outputWidth, useColor, type CliIo } from "../io.js";
import type { RenderOptions } from "../render/options.js";
import { createStyle } from "../render/style.js";
import { selectContext } from "./cli-config.js";
import { connectHub, type HubClient } from "./hub-client.js";
import { readConnectionLayers } from "./connection-options.js";
import { resolveHubConfig } from "./hub-config.js";
import { reportHubError, type ProblemLines } from "./hub-errors.js";
import { HUB_OPTIONS, OUTPUT_OPTION, REASON_OPTION } from "./options.js";

/** What a command's `run` gets. */
export interface AdminContext {
  readonly args: ParsedArgs;
  readonly io: CliIo;
  readonly hub: HubClient;
  /** `-o json`: print the hub's answer as JSON for machines. */
  readonly json: boolean;
  readonly render: RenderOptions;
  /** `--reason`, "" when not given. */
  readonly reason: string;
  /** Sets how the hub's field problems are printed (e.g. against the file they came from). */
  problemLines(lines: ProblemLines): void;
}

/** The outcome of local checks: a value for `run`, or problems saying what is wrong (exit 2). */
export type Prepared<P> = Result<P>;

/** The declaration of an admin command. */
export interface AdminCommandSpec<P> {
  readonly name: string;
  readonly summary: string;
  readonly description: string;
  readonly positionals?: readonly PositionalSpec[];
  readonly options?: Readonly<Record<string, OptionSpec>>;
  /** A state-changing command: takes `--reason`. */
  readonly mutating?: boolean;
  /**
   * The command's own `--actor` option (a filter) replaces the identity flag; the identity then
   * comes from FLOTILLA_ACTOR or the OS user.
   */
  readonly ownsActorOption?: boolean;
  /** Replaces `-o table|json` (bundle render: `-o yaml|json`). */
  readonly output?: OptionSpec;
  /** Checks and reads the input before connecting. */
  readonly prepare: (
    args: ParsedArgs,
    io: CliIo,
  ) => Prepared<P> | Promise<Prepared<P>>;
  readonly run: (ctx: AdminContext, prepared: P) => Promise<number>;
}

/** A successful preparation. */
export function prepared<P>(value: P): Prepared<P> {
  return ok(value);
}

/** A failed preparation; `messages` are printed as given, one a line. */
export function refused(messages: readonly string[]): Prepared<never> {
  return fail(messages.map(problem));
}

/** Prints problems with the connection settings, each line `flotilla: PROBLEM`. */
function printProblems(io: CliIo, problems: readonly Problem[]): void {
  io.stderr(problems.map((p) => `flotilla: ${formatProblem(p)}\n`).join(""));
}

function hubOptions(withoutActor: boolean): Record<string, OptionSpec> {
  if (!withoutActor) return HUB_OPTIONS;
  return Object.fromEntries(
    Object.entries(HUB_OPTIONS).filter(([name]) => name !== "actor"),
  );
}

/** Builds a {@link Command} from an admin command's declaration. */
export function adminCommand<P>(spec: AdminCommandSpec<P>): Command {
  return {
    name: spec.name,
    summary: spec.summary,
    description: spec.description,
    ...compact({ positionals: spec.positionals }),
    options: {
      ...spec.options,
      ...(spec.mutating === true ? REASON_OPTION : {}),
      ...OUTPUT_OPTION,
      ...compact({ output: spec.output }),
      ...hubOptions(spec.ownsActorOption === true),
    },
    run: async (args, io) => {
      const layers = readConnectionLayers(args, io.env, {
        actorFlag: spec.ownsActorOption !== true,
      });
      const selected = await selectContext(
        io,
        layers.flags.context ?? layers.env.context,
      );
      if (!selected.ok) {
        printProblems(io, selected.problems);
        return EXIT_USAGE;
      }
      const config = resolveHubConfig(layers, io, {
        actorFlag: spec.ownsActorOption !== true,
        ...compact({ context: selected.value }),
      });
      if (!config.ok) {
        printProblems(io, config.problems);
        return EXIT_USAGE;
      }
      const input = await spec.prepare(args, io);
      if (!input.ok) {
        io.stderr(input.problems.map((p) => `${formatProblem(p)}\n`).join(""));
        return EXIT_USAGE;
      }
      const connection = await connectHub(config.value, io);
      if (!connection.ok) {
        printProblems(io, connection.problems);
        return EXIT_USAGE;
      }
      const hub = connection.value;
      let lines: ProblemLines | undefined;
      const ctx: AdminContext = {
        args,
        io,
        hub,
        json: args.string("output") === "json",
        render: {
          width: outputWidth(io),
          style: createStyle(useColor(io)),
          all: false,
        },
        reason: args.string("reason") ?? "",
        problemLines: (l) => {
          lines = l;
        },
      };
      try {
        return await spec.run(ctx, input.value);
      } catch (error) {
        if (!(error instanceof FlotillaError)) throw error;
        return reportHubError(io, hub, error, lines);
      } finally {
        hub.close();
      }
    },
  };
}

/** A usage-style message for a command: `flotilla: cluster label: MESSAGE`. */
export function usageMessage(command: string, message: string): string {
  return `flotilla: ${command}: ${message}`;
}
