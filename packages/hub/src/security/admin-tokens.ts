/**
 * The admin token file (`--admin-tokens FILE`): bearer tokens for people and tools that call
 * AdminService without a client certificate. The file is a YAML list:
 *
 *     - name: ci-pipeline
 *       role: operator
 *       tokenSha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
 *     - name: alice
 *       role: admin
 *       token: s3cret-in-clear   # accepted, with a warning: prefer tokenSha256
 *
 * The hub keeps only SHA-256 digests in memory and compares them in constant time. The file is
 * polled (its mtime, size and inode) so that tokens can be added, rotated and removed without a
 * restart; a reload that fails keeps the last good version and logs why.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import {
  boundsProblems,
  FlotillaError,
  formatProblem,
  tooDeepProblem,
  type Problem,
} from "@flotilla/core";
import type { Logger } from "pino";
import { parse as parseYaml, YAMLParseError } from "yaml";
import { z } from "zod";
import {
  ADMIN_NAME_PATTERN,
  ADMIN_ROLES,
  type AdminIdentity,
  type AdminRole,
} from "./identity.js";

/** The characters a bearer token may have (RFC 6750's b64token), and its length bounds. */
export const BEARER_TOKEN_PATTERN = /^[A-Za-z0-9._~+/=-]{16,1024}$/;

/** Default poll interval of the token file. */
export const ADMIN_TOKENS_POLL_MS = 5_000;

/** One entry of the file, as the hub keeps it. */
export interface AdminTokenEntry {
  readonly name: string;
  readonly role: AdminRole;
  /** SHA-256 of the token, 32 bytes. */
  readonly digest: Buffer;
}

const entrySchema = z
  .object({
    name: z
      .string()
      .regex(
        ADMIN_NAME_PATTERN,
        "must be 1 to 64 of a-z, 0-9, ., _, @, -, starting with a letter or digit",
      ),
    role: z.enum(ADMIN_ROLES, {
      error: `must be one of ${ADMIN_ROLES.join(", ")}`,
    }),
    tokenSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/i, "must be 64 hexadecimal digits (SHA-256)")
      .optional(),
    token: z
      .string()
      .regex(
        BEARER_TOKEN_PATTERN,
        "must be 16 to 1024 of A-Z, a-z, 0-9, ., _, ~, +, /, =, -",
      )
      .optional(),
  })
  .strict()
  .superRefine((entry, ctx) => {
    if ((entry.tokenSha256 === undefined) === (entry.token === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["tokenSha256"],
        message: "give exactly one of tokenSha256 (preferred) or token",
      });
    }
  });

const fileSchema = z.array(entrySchema).superRefine((entries, ctx) => {
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    if (seen.has(entry.name)) {
      ctx.addIssue({
        code: "custom",
        path: [i, "name"],
        message: "is used by an earlier entry",
        input: entry.name,
      });
    }
    seen.add(entry.name);
  });
});

function pathOf(segments: readonly PropertyKey[]): string {
  return segments
    .map((s, i) =>
      typeof s === "number"
        ? `[${String(s)}]`
        : `${i === 0 ? "" : "."}${String(s)}`,
    )
    .join("");
}

function valueAt(root: unknown, segments: readonly PropertyKey[]): unknown {
  let value = root;
  for (const segment of segments) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

/** SHA-256 of a token. */
export function tokenDigest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** What {@link parseAdminTokenFile} found: the entries, and the names given with a clear token. */
export interface ParsedAdminTokens {
  readonly entries: readonly AdminTokenEntry[];
  readonly clearTokenNames: readonly string[];
}

/**
 * Parses the token file's text; `file` names it in the error. Bad content throws an
 * `invalid_argument` FlotillaError with every problem (path, message, the value; never a token).
 */
export function parseAdminTokenFile(
  text: string,
  file: string,
): ParsedAdminTokens {
  let document: unknown;
  try {
    document = parseYaml(text) as unknown;
  } catch (error) {
    const why =
      error instanceof YAMLParseError && error.code === "RESOURCE_EXHAUSTION"
        ? tooDeepProblem("").message
        : `not YAML (${error instanceof Error ? error.message : String(error)})`;
    throw new FlotillaError(
      "invalid_argument",
      `Cannot read admin token file "${file}": ${why}`,
      { cause: error },
    );
  }
  const outOfBounds = boundsProblems(document, "");
  if (outOfBounds.length > 0) {
    throw new FlotillaError(
      "invalid_argument",
      `Invalid admin token file "${file}": ${outOfBounds.map(formatProblem).join("; ")}`,
      { problems: outOfBounds },
    );
  }
  // An empty file is an empty list: every token revoked.
  const parsed = fileSchema.safeParse(document ?? []);
  if (!parsed.success) {
    const problems: Problem[] = parsed.error.issues.map((issue) => {
      const value = valueAt(document, issue.path);
      // Only scalar values are shown, and never a clear token: an entry may hold one.
      const shown =
        issue.path.at(-1) !== "token" &&
        value !== undefined &&
        (typeof value !== "object" || value === null);
      return {
        path: pathOf(issue.path),
        message: issue.message,
        ...(shown ? { value } : {}),
      };
    });
    throw new FlotillaError(
      "invalid_argument",
      `Invalid admin token file "${file}": ${problems.map(formatProblem).join("; ")}`,
      { problems },
    );
  }
  return {
    entries: parsed.data.map((entry) => ({
      name: entry.name,
      role: entry.role,
      digest:
        entry.tokenSha256 === undefined
          ? tokenDigest(entry.token ?? "")
          : Buffer.from(entry.tokenSha256, "hex"),
    })),
    clearTokenNames: parsed.data
      .filter((entry) => entry.token !== undefined)
      .map((entry) => entry.name),
  };
}

/**
 * The identity `token` stands for among `entries`, or undefined. Every entry is compared (in
 * constant time), so that the time taken does not tell which entry, if any, matched.
 */
export function findAdminToken(
  entries: readonly AdminTokenEntry[],
  token: string,
): AdminIdentity | undefined {
  const digest = tokenDigest(token);
  let found: AdminTokenEntry | undefined;
  for (const entry of entries) {
    if (timingSafeEqual(entry.digest, digest) && found === undefined) {
      found = entry;
    }
  }
  return found === undefined
    ? undefined
    : { kind: "admin", name: found.name, role: found.role, via: "token" };
}

/** The loaded token file, kept current while it is watched. */
export interface AdminTokens {
  /** The identity of `token`, or undefined when no entry has it. */
  lookup(token: string): AdminIdentity | undefined;
  /** How many entries the current version has. */
  readonly size: number;
  /** Re-reads the file now (the poll does this when it changes); false when it was refused. */
  reload(): Promise<boolean>;
}

/** Options of {@link loadAdminTokens}. */
export interface LoadAdminTokensOptions {
  readonly file: string;
  readonly logger: Logger;
  /** How often the file's mtime is checked; default {@link ADMIN_TOKENS_POLL_MS}. */
  readonly pollIntervalMs?: number;
  /** Stops the polling. Absent: the file is read once. */
  readonly signal?: AbortSignal;
}

async function readTokens(file: string): Promise<ParsedAdminTokens> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot read admin token file "${file}": ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      { cause: error },
    );
  }
  return parseAdminTokenFile(text, file);
}

async function fingerprint(file: string): Promise<string> {
  try {
    const s = await stat(file);
    return `${String(s.ino)}:${String(s.size)}:${String(s.mtimeMs)}`;
  } catch (error) {
    return `missing:${(error as NodeJS.ErrnoException).code ?? ""}`;
  }
}

/**
 * Reads the token file (a bad first version rejects with the problems) and, given a `signal`,
 * re-reads it whenever it changes until the signal aborts.
 */
export async function loadAdminTokens(
  options: LoadAdminTokensOptions,
): Promise<AdminTokens> {
  const { file, logger } = options;
  const log = logger.child({ component: "admin-tokens" });
  const warnClear = (names: readonly string[]): void => {
    if (names.length > 0) {
      log.warn(
        { file, names },
        "Admin token file holds tokens in clear: store tokenSha256 instead",
      );
    }
  };
  let seen = await fingerprint(file);
  const first = await readTokens(file);
  warnClear(first.clearTokenNames);
  let entries = first.entries;
  log.info({ file, count: entries.length }, "Admin tokens loaded");

  const reload = async (): Promise<boolean> => {
    try {
      const next = await readTokens(file);
      entries = next.entries;
      warnClear(next.clearTokenNames);
      log.info({ file, count: entries.length }, "Admin tokens reloaded");
      return true;
    } catch (error) {
      log.error(
        { err: error, file, count: entries.length },
        "Admin token file refused: keeping the last good version",
      );
      return false;
    }
  };

  const { signal } = options;
  if (signal !== undefined && !signal.aborted) {
    let polling = false;
    const timer = setInterval(() => {
      if (polling) return;
      polling = true;
      void (async () => {
        const now = await fingerprint(file);
        if (now !== seen) {
          seen = now;
          await reload();
        }
      })().finally(() => {
        polling = false;
      });
    }, options.pollIntervalMs ?? ADMIN_TOKENS_POLL_MS);
    timer.unref();
    signal.addEventListener(
      "abort",
      () => {
        clearInterval(timer);
      },
      { once: true },
    );
  }

  return {
    lookup: (token) => findAdminToken(entries, token),
    get size() {
      return entries.length;
    },
    reload,
  };
}
