/**
 * Options every admin command shares: where the hub is and how to reach it, who is acting, how long
 * to wait, the output format, and the reason recorded for a state-changing call.
 */
import type { OptionSpec } from "../commands/command.js";

/** Default hub address (the hub's default gRPC port on this machine). */
export const DEFAULT_HUB_ADDRESS = "127.0.0.1:7070";

/** Default `--timeout`: how long one call may take. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** The connection options, listed apart in every admin command's help. */
export const HUB_OPTIONS = {
  hub: {
    type: "string",
    valueName: "HOST:PORT",
    group: "hub",
    description: `the hub's gRPC address (env FLOTILLA_HUB; default ${DEFAULT_HUB_ADDRESS})`,
  },
  "tls-ca": {
    type: "string",
    valueName: "FILE",
    group: "hub",
    description:
      "CA certificate (PEM) the hub's certificate is checked against (env FLOTILLA_TLS_CA)",
  },
  "tls-cert": {
    type: "string",
    valueName: "FILE",
    group: "hub",
    description:
      "client certificate (PEM) for mutual TLS (env FLOTILLA_TLS_CERT)",
  },
  "tls-key": {
    type: "string",
    valueName: "FILE",
    group: "hub",
    description:
      "client private key (PEM) for mutual TLS (env FLOTILLA_TLS_KEY)",
  },
  "insecure-plaintext": {
    type: "boolean",
    group: "hub",
    description:
      "talk to the hub without TLS (env FLOTILLA_INSECURE_PLAINTEXT=1)",
  },
  context: {
    type: "string",
    valueName: "NAME",
    group: "hub",
    description:
      "the config file's context to use (env FLOTILLA_CONTEXT; default its current context)",
  },
  "token-file": {
    type: "string",
    valueName: "FILE",
    group: "hub",
    description:
      "file holding a bearer token for the hub (env FLOTILLA_TOKEN_FILE, or the token in FLOTILLA_TOKEN)",
  },
  actor: {
    type: "string",
    valueName: "NAME",
    group: "hub",
    description:
      "who is acting, for a hub in insecure development mode (env FLOTILLA_ACTOR; default the OS user)",
  },
  timeout: {
    type: "string",
    valueName: "DURATION",
    group: "hub",
    description: "how long one call may take, e.g. 10s, 1m (default 10s)",
  },
} as const satisfies Record<string, OptionSpec>;

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
