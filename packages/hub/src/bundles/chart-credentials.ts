/**
 * The chart credentials file (`--chart-credentials FILE`, docs/install.md#chart-credentials): how
 * the hub reaches private chart repositories and registries. A YAML (or JSON) list; the entry
 * whose `url` is the longest prefix of the chart's location applies:
 *
 *     - url: https://charts.example.com/private
 *       username: flotilla
 *       passwordFile: /var/run/secrets/charts/password
 *       caFile: /etc/flotilla/charts-ca.pem
 *
 * Passwords never appear in problems, logs or the audit.
 */
import { readFile } from "node:fs/promises";
import {
  boundsProblems,
  fail,
  ok,
  type Problem,
  type Result,
} from "@flotilla/core";
import { unreadableFile } from "@flotilla/node";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { issuesToProblems } from "../audit/audit-record.js";

/** One entry of the file, resolved (a `passwordFile` read). */
export interface ChartCredential {
  /** A URL prefix (`https://…`, `http://…` or `oci://…`) of the chart sources it applies to. */
  readonly url: string;
  readonly username?: string;
  readonly password?: string;
  /** A CA bundle (PEM) that verifies the source's certificate. */
  readonly caFile?: string;
  readonly insecureSkipTLSVerify?: boolean;
  /** An OCI registry spoken to over plain HTTP (a registry on loopback or a private network). */
  readonly plainHttp?: boolean;
}

const URL_PREFIX = /^(https?|oci):\/\/[^\s/]+/;

const entrySchema = z
  .object({
    url: z
      .string()
      .regex(
        URL_PREFIX,
        "must start with https://, http:// or oci:// and a host",
      ),
    username: z.string().min(1).optional(),
    password: z.string().min(1).optional(),
    passwordFile: z.string().min(1).optional(),
    caFile: z.string().min(1).optional(),
    insecureSkipTLSVerify: z.boolean().optional(),
    plainHttp: z.boolean().optional(),
  })
  .strict()
  .superRefine((entry, ctx) => {
    if (entry.password !== undefined && entry.passwordFile !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["passwordFile"],
        message: "give password or passwordFile, not both",
      });
    }
    const hasPassword =
      entry.password !== undefined || entry.passwordFile !== undefined;
    if (hasPassword !== (entry.username !== undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["username"],
        message:
          "a username needs a password or passwordFile, and the other way round",
      });
    }
  });

/** A password's value is never shown, whatever is wrong with it. */
function withoutSecrets(problems: readonly Problem[]): Problem[] {
  return problems.map((p) =>
    p.path.endsWith(".password") ? { path: p.path, message: p.message } : p,
  );
}

/** Parses the file's text (`file` names it in messages); passwordFile and caFile are checked. */
export async function parseChartCredentials(
  text: string,
  file: string,
): Promise<Result<readonly ChartCredential[]>> {
  let document: unknown;
  try {
    document = parseYaml(text) as unknown;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return fail([{ path: file, message: `is not YAML or JSON (${why})` }]);
  }
  const bounds = boundsProblems(document, "");
  if (bounds.length > 0) return fail(withoutSecrets(bounds));
  const parsed = z
    .array(entrySchema)
    .safeParse(document ?? [], { reportInput: true });
  if (!parsed.success)
    return fail(withoutSecrets(issuesToProblems(parsed.error, "")));
  const problems: Problem[] = [];
  const entries: ChartCredential[] = [];
  for (const [i, entry] of parsed.data.entries()) {
    const { passwordFile, ...rest } = entry;
    for (const [field, path] of [
      ["passwordFile", passwordFile],
      ["caFile", entry.caFile],
    ] as const) {
      const why = path === undefined ? undefined : unreadableFile(path);
      if (why !== undefined)
        problems.push({
          path: `[${String(i)}].${field}`,
          message: why,
          value: path,
        });
    }
    const password =
      passwordFile === undefined || problems.length > 0
        ? entry.password
        : (await readFile(passwordFile, "utf8")).trim();
    entries.push({ ...rest, ...(password === undefined ? {} : { password }) });
  }
  return problems.length > 0 ? fail(problems) : ok(entries);
}

/** Reads and parses the credentials file. */
export async function loadChartCredentials(
  file: string,
): Promise<Result<readonly ChartCredential[]>> {
  const why = unreadableFile(file);
  if (why !== undefined) return fail([{ path: file, message: why }]);
  return parseChartCredentials(await readFile(file, "utf8"), file);
}

/** The entry whose url is the longest prefix of `location`, if any. */
export function credentialFor(
  credentials: readonly ChartCredential[],
  location: string,
): ChartCredential | undefined {
  let best: ChartCredential | undefined;
  for (const entry of credentials) {
    if (
      location.startsWith(entry.url) &&
      (best === undefined || entry.url.length > best.url.length)
    )
      best = entry;
  }
  return best;
}
