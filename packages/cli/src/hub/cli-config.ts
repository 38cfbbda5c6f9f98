/**
 * The CLI's configuration file, like kubeconfig: named contexts, each a hub address and how to
 * reach it (CA, client certificate and key, bearer token or token file, or plaintext), and the
 * current one. Found at `$FLOTILLA_CONFIG`, else `$HOME/.config/flotilla/config.yaml`:
 *
 *     currentContext: prod
 *     contexts:
 *       - name: prod
 *         hub: hub.example.com:7070
 *         caFile: /home/alice/.config/flotilla/prod/ca.pem
 *         certFile: /home/alice/.config/flotilla/prod/cert.pem
 *         keyFile: /home/alice/.config/flotilla/prod/key.pem
 *       - name: dev
 *         hub: 127.0.0.1:7070
 *         insecurePlaintext: true
 *
 * A bad file is reported with the file and each field's path and value. The file is written with
 * mode 0600 (it may hold a token) and atomically, so that a crash never leaves half of it.
 */
import {
  boundsProblems,
  fail,
  formatProblem,
  compact,
  ok,
  problem,
  type Result,
} from "@flotilla/core";
import { parseDocument, stringify } from "yaml";
import { describeReadError, fileProblem } from "../input.js";
import type { CliIo } from "../io.js";

/** One context. Paths are used as written (set-context writes absolute ones). */
export interface CliContext {
  readonly name: string;
  readonly hub: string;
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
  /** A bearer token in clear; prefer `tokenFile`. */
  readonly token?: string;
  readonly tokenFile?: string;
  readonly insecurePlaintext?: boolean;
}

/** The whole file. */
export interface CliConfig {
  readonly currentContext?: string;
  readonly contexts: readonly CliContext[];
}

/** A problem with the file: `FILE: PATH: MESSAGE (got VALUE)`. */
type Problems = string[];

const CONTEXT_NAME = /^[A-Za-z0-9][-A-Za-z0-9._@]{0,62}$/;
const STRING_FIELDS = [
  "hub",
  "caFile",
  "certFile",
  "keyFile",
  "token",
  "tokenFile",
] as const;

/** Where the config file is: `$FLOTILLA_CONFIG`, else under `$HOME`; undefined without either. */
export function cliConfigPath(io: CliIo): string | undefined {
  const explicit = io.env["FLOTILLA_CONFIG"];
  if (explicit !== undefined && explicit !== "") return explicit;
  const home = io.env["HOME"];
  if (home === undefined || home === "") return undefined;
  return `${home.replace(/\/+$/, "")}/.config/flotilla/config.yaml`;
}

function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

function parseContext(
  raw: unknown,
  at: string,
  problems: Problems,
): CliContext | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    problems.push(`${at}: must be a mapping with name and hub`);
    return undefined;
  }
  const entry = raw as Record<string, unknown>;
  const before = problems.length;
  for (const key of Object.keys(entry)) {
    if (
      key !== "name" &&
      key !== "insecurePlaintext" &&
      !(STRING_FIELDS as readonly string[]).includes(key)
    ) {
      problems.push(`${at}.${key}: unknown field`);
    }
  }
  const { name } = entry;
  if (typeof name !== "string" || !CONTEXT_NAME.test(name)) {
    problems.push(
      `${at}.name: must be 1 to 63 letters, digits or . _ @ -, starting with a letter or digit (got ${show(name)})`,
    );
  }
  for (const field of STRING_FIELDS) {
    const value = entry[field];
    if (field === "hub" && value === undefined) {
      problems.push(`${at}.hub: is required (HOST:PORT)`);
    } else if (
      value !== undefined &&
      (typeof value !== "string" || value === "")
    ) {
      problems.push(
        `${at}.${field}: must be a non-empty string (got ${field === "token" ? "a non-string" : show(value)})`,
      );
    }
  }
  const insecure = entry["insecurePlaintext"];
  if (insecure !== undefined && typeof insecure !== "boolean") {
    problems.push(
      `${at}.insecurePlaintext: must be true or false (got ${show(insecure)})`,
    );
  }
  if (entry["token"] !== undefined && entry["tokenFile"] !== undefined) {
    problems.push(`${at}: give token or tokenFile, not both`);
  }
  if ((entry["certFile"] === undefined) !== (entry["keyFile"] === undefined)) {
    problems.push(`${at}: certFile and keyFile go together`);
  }
  if (
    insecure === true &&
    (entry["caFile"] !== undefined || entry["certFile"] !== undefined)
  ) {
    problems.push(
      `${at}: insecurePlaintext cannot be combined with caFile, certFile or keyFile`,
    );
  }
  return problems.length === before
    ? (entry as unknown as CliContext)
    : undefined;
}

/** Parses the file's text; every problem's path is the file, printed `FILE: PATH: MESSAGE`. */
export function parseCliConfig(text: string, file: string): Result<CliConfig> {
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    return fail(
      document.errors.map((e) =>
        fileProblem(file, `not valid YAML: ${e.message.split("\n")[0] ?? ""}`),
      ),
    );
  }
  const raw: unknown = document.toJS() ?? {};
  const outOfBounds = boundsProblems(raw, "");
  if (outOfBounds.length > 0) {
    return fail(outOfBounds.map((p) => fileProblem(file, formatProblem(p))));
  }
  const problems: Problems = [];
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return fail([
      fileProblem(file, "must be a mapping with currentContext and contexts"),
    ]);
  }
  const root = raw as Record<string, unknown>;
  for (const key of Object.keys(root)) {
    if (key !== "currentContext" && key !== "contexts")
      problems.push(`${key}: unknown field`);
  }
  const rawContexts = root["contexts"] ?? [];
  const contexts: CliContext[] = [];
  if (!Array.isArray(rawContexts)) {
    problems.push("contexts: must be a list");
  } else {
    const seen = new Set<string>();
    rawContexts.forEach((entry, i) => {
      const context = parseContext(entry, `contexts[${String(i)}]`, problems);
      if (context === undefined) return;
      if (seen.has(context.name)) {
        problems.push(
          `contexts[${String(i)}].name: is used by an earlier context (got ${show(context.name)})`,
        );
      }
      seen.add(context.name);
      contexts.push(context);
    });
  }
  const current = root["currentContext"];
  if (current !== undefined && typeof current !== "string") {
    problems.push(
      `currentContext: must be a context's name (got ${show(current)})`,
    );
  } else if (
    typeof current === "string" &&
    problems.length === 0 &&
    !contexts.some((c) => c.name === current)
  ) {
    problems.push(`currentContext: names no context (got ${show(current)})`);
  }
  if (problems.length > 0) {
    return fail(problems.map((p) => fileProblem(file, p)));
  }
  return ok({
    ...(typeof current === "string" ? { currentContext: current } : {}),
    contexts,
  });
}

/** What {@link readCliConfig} found. */
export interface ReadConfig {
  readonly file: string | undefined;
  /** Empty when the file does not exist. */
  readonly config: CliConfig;
  readonly exists: boolean;
}

/** Reads and checks the config file; a missing file is an empty configuration. */
export async function readCliConfig(io: CliIo): Promise<Result<ReadConfig>> {
  const file = cliConfigPath(io);
  const empty = ok({ file, config: { contexts: [] }, exists: false });
  if (file === undefined) return empty;
  let text: string;
  try {
    text = await io.readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return empty;
    return fail([
      fileProblem(file, `cannot read: ${describeReadError(error)}`),
    ]);
  }
  const parsed = parseCliConfig(text, file);
  return parsed.ok ? ok({ file, config: parsed.value, exists: true }) : parsed;
}

/** The file's text for `config`. */
export function cliConfigText(config: CliConfig): string {
  return stringify({
    ...compact({ currentContext: config.currentContext }),
    contexts: config.contexts,
  });
}

/** Writes `config` to `file`, mode 0600, atomically. */
export async function writeCliConfig(
  io: CliIo,
  file: string,
  config: CliConfig,
): Promise<void> {
  await io.writeFile(file, cliConfigText(config), 0o600);
}

/**
 * The context a hub command uses: `name` (from `--context NAME` or FLOTILLA_CONTEXT, see
 * connection-options.ts), else the file's current one; undefined when there is none. Naming a
 * context that does not exist is a problem.
 */
export async function selectContext(
  io: CliIo,
  name: string | undefined,
): Promise<Result<CliContext | undefined>> {
  const read = await readCliConfig(io);
  if (!read.ok) return read;
  const { file, config } = read.value;
  const chosen = name ?? config.currentContext;
  if (chosen === undefined) return ok(undefined);
  const context = config.contexts.find((c) => c.name === chosen);
  if (context === undefined) {
    const known = config.contexts.map((c) => c.name);
    return fail([
      problem(
        `context "${chosen}" is not in ${file ?? "the config file (no $FLOTILLA_CONFIG or $HOME)"}` +
          (known.length === 0 ? "" : ` (contexts: ${known.join(", ")})`),
      ),
    ]);
  }
  return ok(context);
}
