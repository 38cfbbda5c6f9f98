/**
 * The `--prometheus-*` options checked together (docs/running.md#prometheus): the URL metric gates
 * query, and its bearer token read from a file at start. Credentials have one place, the token
 * file: a URL with `user:password@` is refused, and quoted without them.
 */
import { readFileSync } from "node:fs";
import type { Problem } from "@flotilla/core";
import {
  spelled,
  unreadableFile,
  type GatheredOptions,
  type OptionValues,
} from "@flotilla/node";
import { BEARER_TOKEN, redactUserInfo } from "../gates/prometheus-client.js";
import { HUB_OPTIONS } from "./config-options.js";

/** How the hub reaches Prometheus; absent from the config without `--prometheus-url`. */
export interface HubPrometheusSettings {
  /** http(s) base URL of the HTTP API, without credentials. */
  readonly url: string;
  /** The content of `--prometheus-bearer-token-file`, trimmed. */
  readonly bearerToken?: string;
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

type Gathered = GatheredOptions<typeof HUB_OPTIONS>;

/**
 * The Prometheus settings, or undefined without a URL (or with a bad one); problems go to
 * `problems`, each naming the flag or variable it came from.
 */
export function checkPrometheus(
  values: Partial<OptionValues<typeof HUB_OPTIONS>>,
  sources: Gathered["sources"],
  problems: Problem[],
): HubPrometheusSettings | undefined {
  const where = (name: "prometheusUrl" | "prometheusBearerTokenFile") =>
    sources[name]?.from ?? HUB_OPTIONS[name].flag;
  const url = values.prometheusUrl;
  const file = values.prometheusBearerTokenFile;
  const before = problems.length;
  if (url === undefined) {
    if (file !== undefined)
      problems.push({
        path: where("prometheusBearerTokenFile"),
        message: `needs ${spelled(HUB_OPTIONS.prometheusUrl)}: the token is sent to that URL (${spelled(HUB_OPTIONS.prometheusBearerTokenFile)})`,
        value: file,
      });
    return undefined;
  }
  const urlProblem = prometheusUrlProblem(url);
  if (urlProblem !== undefined)
    problems.push({
      path: where("prometheusUrl"),
      message: `${urlProblem} (${spelled(HUB_OPTIONS.prometheusUrl)})`,
      value: redactUserInfo(url),
    });
  const token = file === undefined ? undefined : readToken(file);
  if (token !== undefined && !token.ok)
    problems.push({
      path: where("prometheusBearerTokenFile"),
      message: `${token.problem} (${spelled(HUB_OPTIONS.prometheusBearerTokenFile)})`,
      value: file,
    });
  const { prometheusTimeout: timeoutMs, prometheusMaxBytes: maxBytes } = values;
  if (
    problems.length > before ||
    timeoutMs === undefined ||
    maxBytes === undefined
  )
    return undefined;
  return {
    url,
    ...(token?.ok === true ? { bearerToken: token.token } : {}),
    timeoutMs,
    maxBytes,
  };
}

/** Why `text` cannot be the Prometheus URL, or undefined. */
function prometheusUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an http:// or https:// URL, like http://prometheus:9090";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return "must be an http:// or https:// URL, like http://prometheus:9090";
  if (url.username !== "" || url.password !== "")
    return `must not hold credentials: put the bearer token in ${HUB_OPTIONS.prometheusBearerTokenFile.flag}`;
  if (url.search !== "" || url.hash !== "")
    return "must have no query (?) and no fragment (#): the hub adds /api/v1/query to it";
  return undefined;
}

type TokenRead =
  | { readonly ok: true; readonly token: string }
  | { readonly ok: false; readonly problem: string };

/** The token in `file`: its content without surrounding white space (a trailing newline). */
function readToken(file: string): TokenRead {
  const unreadable = unreadableFile(file);
  if (unreadable !== undefined) return { ok: false, problem: unreadable };
  let content: string;
  try {
    content = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, problem: `cannot be read (${code ?? String(error)})` };
  }
  const token = content.trim();
  if (token === "") return { ok: false, problem: "names an empty file" };
  // Never quote the content: it is a secret, even when it is a wrong one.
  if (/[\r\n]/.test(token))
    return {
      ok: false,
      problem: "holds more than one line: it must hold the token alone",
    };
  if (!BEARER_TOKEN.test(token))
    return {
      ok: false,
      problem:
        "holds a space or a character that is not printable ASCII: an HTTP header cannot carry it",
    };
  return { ok: true, token };
}
