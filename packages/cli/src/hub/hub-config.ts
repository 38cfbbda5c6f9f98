/**
 * Where and how to reach the hub, from the command's flags, the environment and the chosen context
 * of the config file (cli-config.ts), in that order of precedence (empty variables count as
 * unset). Plaintext is never a silent default: without TLS files the caller must say
 * `--insecure-plaintext` (or a context must), so a typo in a TLS variable cannot downgrade a
 * connection. The bearer token comes from `--token-file`, FLOTILLA_TOKEN_FILE or FLOTILLA_TOKEN,
 * or the context's `tokenFile` or `token`.
 */
import {
  compact,
  fail,
  formatProblems,
  ok,
  parseDuration,
  problem,
  type Result,
} from "@flotilla/core";
import type { CliIo } from "../io.js";
import type { CliContext } from "./cli-config.js";
import {
  DEFAULT_HUB_ADDRESS,
  TOKEN_ENV,
  type ConnectionLayers,
} from "./connection-options.js";
import { DEFAULT_TIMEOUT_MS } from "./options.js";

/** TLS files (paths); `ca` absent means the system's roots. */
export interface TlsFiles {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
}

/** Everything needed to open a connection and make calls. */
export interface HubConfig {
  readonly address: string;
  /** Undefined: plaintext (`--insecure-plaintext`). */
  readonly tls: TlsFiles | undefined;
  /** Sent as the `x-flotilla-actor` header (what a hub in insecure development mode records). */
  readonly actor: string;
  /** Where the bearer token comes from (sent as `authorization: Bearer …`); undefined: none. */
  readonly bearer: BearerSource | undefined;
  /** Deadline of one call. */
  readonly timeoutMs: number;
}

/** A bearer token given in clear, or the file holding it; `from` names where it was set. */
export type BearerSource =
  | { readonly token: string; readonly from: string }
  | { readonly file: string; readonly from: string };

/** The header naming the caller to a hub in insecure development mode. */
export const ACTOR_HEADER = "x-flotilla-actor";

// The hub accepts these characters in the header; anything else would be recorded as anonymous.
const ACTOR_PATTERN = /^[\w.@:/-]{1,128}$/;

const TRUE_WORDS = ["1", "true", "yes", "on"];
const FALSE_WORDS = ["0", "false", "no", "off"];

/** HOST:PORT or [IPv6]:PORT; a gRPC target URI (`dns:///…`, `unix:///…`) passes as it is. */
export function addressProblem(address: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(address)) return undefined;
  if (/^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):\d{1,5}$/.test(address))
    return undefined;
  return `hub address must be HOST:PORT (got "${address}")`;
}

function tlsChoice(
  insecure: boolean,
  files: TlsFiles,
  where: string,
): { tls: TlsFiles | undefined; problems: string[] } | undefined {
  const hasTls = Object.values(files).some((v) => v !== undefined);
  if (!insecure && !hasTls) return undefined;
  if (insecure && hasTls)
    return {
      tls: undefined,
      problems: [`${where}: choose TLS files or plaintext, not both`],
    };
  if (insecure) return { tls: undefined, problems: [] };
  const problems =
    (files.cert === undefined) !== (files.key === undefined)
      ? [
          `${where}: a client certificate and its key go together (give both --tls-cert and --tls-key)`,
        ]
      : [];
  return { tls: files, problems };
}

/**
 * Resolves the hub configuration from the connection options' flags and environment
 * (connection-options.ts), or every problem with it (messages only, printed, exit 2). `actorFlag: false` for
 * commands whose `--actor` means something else (audit's filter): the identity then comes from
 * FLOTILLA_ACTOR or the OS user.
 */
export function resolveHubConfig(
  { flags, env }: ConnectionLayers,
  io: CliIo,
  options: {
    readonly actorFlag?: boolean;
    /** The config file's chosen context; flags and variables win over it. */
    readonly context?: CliContext;
  } = {},
): Result<HubConfig> {
  const problems: string[] = [];
  const { context } = options;
  const address = flags.hub ?? env.hub ?? context?.hub ?? DEFAULT_HUB_ADDRESS;
  const addressIssue = addressProblem(address);
  if (addressIssue !== undefined) problems.push(addressIssue);

  const flagFiles: TlsFiles = compact({
    ca: flags["tls-ca"],
    cert: flags["tls-cert"],
    key: flags["tls-key"],
  });
  const envFiles: TlsFiles = compact({
    ca: env["tls-ca"],
    cert: env["tls-cert"],
    key: env["tls-key"],
  });
  const envInsecureText = env["insecure-plaintext"]?.toLowerCase();
  let envInsecure = false;
  if (envInsecureText !== undefined) {
    if (TRUE_WORDS.includes(envInsecureText)) envInsecure = true;
    else if (!FALSE_WORDS.includes(envInsecureText))
      problems.push(
        `FLOTILLA_INSECURE_PLAINTEXT must be 1 or 0 (got "${envInsecureText}")`,
      );
  }
  const contextFiles: TlsFiles = compact({
    ca: context?.caFile,
    cert: context?.certFile,
    key: context?.keyFile,
  });
  const choice =
    tlsChoice(flags["insecure-plaintext"] !== undefined, flagFiles, "flags") ??
    tlsChoice(envInsecure, envFiles, "environment") ??
    (context === undefined
      ? undefined
      : tlsChoice(
          context.insecurePlaintext === true,
          contextFiles,
          `context "${context.name}"`,
        ));
  if (choice === undefined) {
    problems.push(
      "no transport security chosen: give --tls-ca FILE (with --tls-cert/--tls-key for mutual TLS), " +
        "or --insecure-plaintext for a hub without TLS (or set FLOTILLA_TLS_CA / FLOTILLA_INSECURE_PLAINTEXT=1, " +
        "or use a context: flotilla config set-context)",
    );
  } else {
    problems.push(...choice.problems);
  }

  const actorFlag = options.actorFlag === false ? undefined : flags.actor;
  const actor = actorFlag ?? env.actor ?? io.userName;
  if (actor === undefined)
    problems.push(
      options.actorFlag === false
        ? "cannot tell who you are: set FLOTILLA_ACTOR"
        : "cannot tell who you are: give --actor NAME or set FLOTILLA_ACTOR",
    );
  else if (!ACTOR_PATTERN.test(actor))
    problems.push(
      `actor must be 1 to 128 letters, digits or . _ @ : / - (got "${actor}")`,
    );

  const bearer = bearerSource({ flags, env }, context);

  let timeoutMs = DEFAULT_TIMEOUT_MS;
  const timeout = flags.timeout;
  if (timeout !== undefined) {
    const parsed = parseDuration(timeout);
    if (!parsed.ok)
      problems.push(
        `--timeout ${formatProblems(parsed.problems)} (got "${timeout}")`,
      );
    else if (parsed.value <= 0)
      problems.push(`--timeout must be positive (got "${timeout}")`);
    else timeoutMs = parsed.value;
  }

  if (problems.length > 0 || choice === undefined || actor === undefined)
    return fail(problems.map(problem));
  return ok({ address, tls: choice.tls, actor, bearer, timeoutMs });
}

function bearerSource(
  { flags, env }: ConnectionLayers,
  context: CliContext | undefined,
): BearerSource | undefined {
  const flagFile = flags["token-file"];
  if (flagFile !== undefined) return { file: flagFile, from: "--token-file" };
  const envFile = env["token-file"];
  if (envFile !== undefined)
    return { file: envFile, from: "FLOTILLA_TOKEN_FILE" };
  if (env.token !== undefined) return { token: env.token, from: TOKEN_ENV };
  if (context?.tokenFile !== undefined)
    return {
      file: context.tokenFile,
      from: `context "${context.name}" tokenFile`,
    };
  if (context?.token !== undefined)
    return { token: context.token, from: `context "${context.name}" token` };
  return undefined;
}
