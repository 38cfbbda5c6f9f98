/**
 * What a failed hub call means for the person at the terminal, and the exit code: 2 for bad input
 * (each field problem on its own line), 3 when the hub cannot be reached (naming the address and
 * how to point elsewhere), 1 for every refusal or failure of the operation itself.
 */
import { FlotillaError, formatProblem, type Problem } from "@flotilla/core";
import { EXIT_ERROR, EXIT_UNREACHABLE, EXIT_USAGE, type CliIo } from "../io.js";
import { formatDuration } from "../render/duration.js";
import type { HubClient } from "./hub-client.js";

/** How to print the hub's field problems (default `PATH: MESSAGE (got VALUE)`). */
export type ProblemLines = (problems: readonly Problem[]) => readonly string[];

const defaultLines: ProblemLines = (problems) => problems.map(formatProblem);

function unreachable(io: CliIo, hub: HubClient, detail: string): number {
  io.stderr(
    `flotilla: cannot reach the hub at ${hub.address}: ${detail}\n` +
      "Is the hub running there? Point at it with --hub HOST:PORT (or FLOTILLA_HUB).\n",
  );
  return EXIT_UNREACHABLE;
}

/**
 * Prints `error` for people and returns the exit code. Errors that are not FlotillaErrors are
 * rethrown: they are bugs, reported by the entry as unexpected.
 */
export function reportHubError(
  io: CliIo,
  hub: HubClient,
  error: unknown,
  problemLines: ProblemLines = defaultLines,
): number {
  if (!(error instanceof FlotillaError)) throw error;
  const connected = hub.isConnected();
  switch (error.code) {
    case "invalid_argument": {
      const lines = problemLines(error.problems);
      io.stderr(
        [`flotilla: ${error.message}`, ...lines.map((l) => `  ${l}`)].join(
          "\n",
        ) + "\n",
      );
      return EXIT_USAGE;
    }
    case "unavailable":
      if (!connected) return unreachable(io, hub, error.message);
      io.stderr(
        `flotilla: the hub at ${hub.address} is unavailable: ${error.message}\n`,
      );
      return EXIT_UNREACHABLE;
    case "deadline_exceeded":
      if (!connected)
        return unreachable(
          io,
          hub,
          `no connection within ${formatDuration(hub.timeoutMs / 1000)} (${error.message})`,
        );
      io.stderr(
        `flotilla: the hub did not answer within ${formatDuration(hub.timeoutMs / 1000)}; ` +
          "the operation may still complete (check, or retry with a longer --timeout)\n",
      );
      return EXIT_ERROR;
    case "not_found":
    case "already_exists":
    case "failed_precondition":
    case "permission_denied":
    case "unauthenticated":
    case "resource_exhausted":
    case "internal": {
      const lines = problemLines(error.problems);
      io.stderr(
        [`flotilla: ${error.message}`, ...lines.map((l) => `  ${l}`)].join(
          "\n",
        ) + "\n",
      );
      return EXIT_ERROR;
    }
  }
}
