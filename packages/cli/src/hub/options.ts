/**
 * Options every admin command shares: where the hub is and how to reach it, who is acting, how long
 * to wait, the output format, and the reason recorded for a state-changing call.
 */
import type { OptionSpec } from "../commands/command.js";
import { HUB_CONNECTION_OPTIONS } from "./connection-options.js";

/** Default `--timeout`: how long one call may take. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** The connection options (connection-options.ts), listed apart in every admin command's help. */
export const HUB_OPTIONS: Readonly<Record<string, OptionSpec>> =
  Object.fromEntries(
    Object.entries(HUB_CONNECTION_OPTIONS).map(([name, spec]) => [
      name,
      "arg" in spec
        ? {
            type: "string",
            valueName: spec.arg,
            group: "hub",
            description: spec.help,
          }
        : { type: "boolean", group: "hub", description: spec.help },
    ]),
  );

/** `-o table|json`. */
export const OUTPUT_OPTION = {
  output: {
    type: "string",
    short: "o",
    choices: ["table", "json"],
    description: "output format: table for people (default), json for machines",
  },
} as const satisfies Record<string, OptionSpec>;

/** `--reason TEXT`, on every state-changing command. */
export const REASON_OPTION = {
  reason: {
    type: "string",
    valueName: "TEXT",
    description: "why, recorded in the audit stream with your identity",
  },
} as const satisfies Record<string, OptionSpec>;

/** `--expected-revision N`, on commands that update a stored record (compare-and-set). */
export const EXPECTED_REVISION_OPTION = {
  "expected-revision": {
    type: "string",
    valueName: "N",
    description:
      "refuse unless the record is still at this revision (see `get`)",
  },
} as const satisfies Record<string, OptionSpec>;
