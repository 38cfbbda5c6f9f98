#!/usr/bin/env node
/**
 * `flotilla-agent`: parses the configuration, runs the agents until SIGTERM or SIGINT, and exits
 * 0 after a graceful stop (or one cut short by SHUTDOWN_TIMEOUT_MS), 1 when it cannot run, 2 on
 * bad configuration. `main` does everything and is what tests call; the process entry at the
 * bottom only wires it to the real process.
 */
import { FlotillaError } from "@flotilla/core";
import { pino, type Logger } from "pino";
import { isConfigError, runAgentProcess } from "./agent-process.js";
import { parseAgentConfig, type AgentConfig } from "./config/config.js";
import { USAGE } from "./usage.js";
import { AGENT_VERSION } from "./version.js";
import { silenceIpServernameWarning } from "@flotilla/protocol";
import { isProcessEntry } from "@flotilla/node";

/** Exit codes. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_CONFIG = 2;

/**
 * How long a stop may take (docs/agent.md, "Stopping"). Every part of the agent stops on the
 * signal, but a part waiting on something that never answers must not keep a process that was
 * asked to stop alive: past this it exits anyway, 0 as a requested stop.
 */
export const SHUTDOWN_TIMEOUT_MS = 10_000;

/** What `main` touches of the outside world. */
export interface MainIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Aborts when the process is asked to stop (SIGTERM, SIGINT). */
  readonly signal: AbortSignal;
  /** The root logger for a configuration; default pino JSON on stdout. */
  readonly createLogger?: (config: AgentConfig) => Logger;
}

function defaultLogger(config: AgentConfig): Logger {
  return pino({
    name: "flotilla-agent",
    level: config.logLevel,
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

/** Runs the agent with `argv` (the words after the program name); resolves to the exit code. */
export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: MainIo,
): Promise<number> {
  // The owner's maintenance-windows command (also a kubectl plugin), not the agent process.
  if (argv[0] === "windows") {
    // Imported on use: it brings @kubernetes/client-node, which the agent loads only for
    // --kubernetes (see kube-hosted-cluster.ts).
    const { runWindowsCommand } = await import("./windows/windows-command.js");
    return runWindowsCommand(argv.slice(1), env, io);
  }
  const parsed = parseAgentConfig(argv, env);
  switch (parsed.type) {
    case "help":
      io.stdout(USAGE);
      return EXIT_OK;
    case "version":
      io.stdout(`flotilla-agent ${AGENT_VERSION}\n`);
      return EXIT_OK;
    case "invalid":
      io.stderr(
        `${parsed.problems.map((p) => `flotilla-agent: ${p}`).join("\n")}\n`,
      );
      return EXIT_CONFIG;
    case "config":
      break;
    default: {
      const unreachable: never = parsed;
      return unreachable;
    }
  }
  const { config } = parsed;
  const logger = (io.createLogger ?? defaultLogger)(config);
  try {
    await runAgentProcess({ config, logger, signal: io.signal });
    return EXIT_OK;
  } catch (error) {
    if (isConfigError(error)) {
      io.stderr(
        `flotilla-agent: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      return EXIT_CONFIG;
    }
    const failure = FlotillaError.from(error);
    logger.fatal({ err: failure }, "The agent failed");
    // Also where a person starting the agent looks first (a refused bootstrap token, say).
    io.stderr(`flotilla-agent: ${failure.message}\n`);
    return EXIT_FAILED;
  }
}

if (isProcessEntry(import.meta.url)) {
  const stopping = new AbortController();
  const onSignal = (name: NodeJS.Signals): void => {
    if (stopping.signal.aborted) {
      // A second signal: the operator does not want to wait for the graceful stop.
      process.stderr.write(`flotilla-agent: ${name} again, exiting now\n`);
      process.exit(EXIT_FAILED);
    }
    stopping.abort();
    setTimeout(() => {
      process.stderr.write(
        `flotilla-agent: the stop took longer than ${String(SHUTDOWN_TIMEOUT_MS / 1_000)} s; exiting now\n`,
      );
      process.exit(EXIT_OK);
    }, SHUTDOWN_TIMEOUT_MS).unref();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  silenceIpServernameWarning();
  main(process.argv.slice(2), process.env, {
    stdout: (text) => {
      process.stdout.write(text);
    },
    stderr: (text) => {
      process.stderr.write(text);
    },
    signal: stopping.signal,
  }).then(
    (code) => {
      process.exitCode = code;
      // Exit even if a library left a handle open; everything of ours was stopped.
      setTimeout(() => process.exit(code), 1_000).unref();
    },
    (error: unknown) => {
      process.stderr.write(
        `flotilla-agent: unexpected error: ${String(error)}\n`,
      );
      process.exit(EXIT_FAILED);
    },
  );
}
