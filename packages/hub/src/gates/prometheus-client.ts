/**
 * The hub's Prometheus client (docs/running.md#prometheus): instant queries against a
 * Prometheus-compatible HTTP API (`POST <url>/api/v1/query`, form-encoded, so long templated
 * queries fit), for metric gates.
 *
 * `query` never throws and never passes silently: an unreachable server, a slow one (bounded by
 * `timeoutMs`, the body included), an HTTP error, an answer larger than `maxBytes` (reading stops
 * at the limit), a body that is not JSON, Prometheus's own error and a result that is not numbers
 * all come back as `{ ok: false, reason }`, a sentence that names the cause. The bearer token goes
 * in the `Authorization` header only: no reason holds it, not even an echo in a server's body.
 */
import type { ReadableStreamDefaultReader } from "node:stream/web";
import { FlotillaError, type QueryOutcome } from "@flotilla/core";
import { prometheusError, queryOutcomeOf } from "./prometheus-result.js";

/** How long a query may take, the answer's body included, unless told otherwise. */
export const DEFAULT_PROMETHEUS_TIMEOUT_MS = 10_000;
/** The largest answer read unless told otherwise (1 MiB). */
export const DEFAULT_PROMETHEUS_MAX_BYTES = 1024 * 1024;

/** How to reach Prometheus (hub flags `--prometheus-*`). */
export interface PrometheusClientOptions {
  /** Base URL, http or https, maybe with a path prefix (`https://mon.example/prometheus`). */
  readonly url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  readonly bearerToken?: string;
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
}

/** Asks one Prometheus instant queries. */
export interface PrometheusClient {
  /** The base URL queries go to (never with credentials). */
  readonly url: string;
  /**
   * Runs `promql` as an instant query at the server's current time. The numbers are one per series
   * of a vector, sorted by the series' label set (its labels sorted by name, compared pair by
   * pair: prometheus-result.ts), so that `result[0]` is the same series on every query; or the one
   * number of a scalar.
   */
  query(
    promql: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<QueryOutcome>;
}

/** What a bearer token may be: printable ASCII without spaces, as an HTTP header carries it. */
export const BEARER_TOKEN = /^[\x21-\x7e]+$/;

/** Longest piece of an unexpected body quoted in a reason. */
const QUOTED_BODY_CHARS = 200;

/**
 * A client for the Prometheus at `options.url`. Throws `invalid_argument` for a URL that is not
 * http(s), holds credentials (the token has one place: `bearerToken`), a query or a fragment, and
 * for limits that are not positive whole numbers.
 */
export function createPrometheusClient(
  options: PrometheusClientOptions,
): PrometheusClient {
  const base = checkedUrl(options.url);
  const timeoutMs = positive(
    "timeoutMs",
    options.timeoutMs ?? DEFAULT_PROMETHEUS_TIMEOUT_MS,
  );
  const maxBytes = positive(
    "maxBytes",
    options.maxBytes ?? DEFAULT_PROMETHEUS_MAX_BYTES,
  );
  const token = options.bearerToken;
  if (token !== undefined && !BEARER_TOKEN.test(token))
    throw new FlotillaError(
      "invalid_argument",
      "Cannot create a Prometheus client: the bearer token is empty or holds a space or a character that is not printable ASCII",
    );
  const endpoint = `${base}/api/v1/query`;
  const headers: Record<string, string> = {
    accept: "application/json",
    "content-type": "application/x-www-form-urlencoded",
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
  };
  const at = `Prometheus at ${base}`;
  const hide = (reason: string): string =>
    token === undefined ? reason : reason.split(token).join("[redacted]");

  const ask = async (
    promql: string,
    signal: AbortSignal,
  ): Promise<QueryOutcome> => {
    const response = await fetch(endpoint, {
      method: "POST",
      headers,
      body: new URLSearchParams({ query: promql }).toString(),
      signal,
      // A redirect could carry the token elsewhere; Prometheus's API does not redirect.
      redirect: "manual",
    });
    const text = await readAtMost(response, maxBytes);
    if (text === undefined)
      return {
        ok: false,
        reason: `${at} sent an answer larger than ${String(maxBytes)} bytes`,
      };
    const body = parseJson(text);
    if (!response.ok) {
      const status = `HTTP ${String(response.status)}${response.statusText === "" ? "" : ` ${response.statusText}`}`;
      const error = prometheusError(body);
      return {
        ok: false,
        reason:
          error === undefined
            ? `${at} answered ${status}${text.trim() === "" ? "" : `: ${quoted(text)}`}`
            : `Prometheus refused the query (${status}): ${error}`,
      };
    }
    if (body === NOT_JSON)
      return {
        ok: false,
        reason: `${at} answered with something that is not JSON: ${quoted(text)}`,
      };
    return queryOutcomeOf(body);
  };

  return {
    url: base,
    async query(promql, queryOptions = {}) {
      const caller = queryOptions.signal;
      // A function: the signal changes while the query runs, which narrowing would not see.
      const cancelled = (): boolean => caller?.aborted === true;
      if (cancelled()) return { ok: false, reason: "the query was cancelled" };
      const timer = new AbortController();
      const timeout = setTimeout(() => {
        timer.abort();
      }, timeoutMs);
      const signal =
        caller === undefined
          ? timer.signal
          : AbortSignal.any([timer.signal, caller]);
      try {
        const outcome = await ask(promql, signal);
        return outcome.ok
          ? outcome
          : { ok: false, reason: hide(outcome.reason) };
      } catch (error) {
        const reason = timer.signal.aborted
          ? `${at} gave no answer within ${formatMs(timeoutMs)}`
          : cancelled()
            ? "the query was cancelled"
            : `cannot reach ${at}: ${networkProblem(error, base)}`;
        return { ok: false, reason: hide(reason) };
      } finally {
        clearTimeout(timeout);
      }
    },
  };
}

/** The body as text, or undefined once it grows past `maxBytes` (the rest is never read). */
async function readAtMost(
  response: Response,
  maxBytes: number,
): Promise<string | undefined> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  const body = response.body;
  if (body === null) return "";
  if (Number.isFinite(declared) && declared > maxBytes) {
    await body.cancel().catch(() => undefined);
    return undefined;
  }
  // fetch's body is a ReadableStream of any; its chunks are bytes.
  const reader = body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const NOT_JSON = Symbol("not JSON");

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/** A short, one-line quote of an unexpected body. */
function quoted(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is replaced
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return JSON.stringify(
    line.length > QUOTED_BODY_CHARS
      ? `${line.slice(0, QUOTED_BODY_CHARS)}...`
      : line,
  );
}

/** What went wrong below HTTP, from the error fetch rejects with (its `cause` holds the code). */
function networkProblem(error: unknown, base: string): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const inner: Error | undefined =
    cause instanceof AggregateError && cause.errors[0] instanceof Error
      ? cause.errors[0]
      : cause instanceof Error
        ? cause
        : error instanceof Error
          ? error
          : undefined;
  const code =
    inner !== undefined && "code" in inner && typeof inner.code === "string"
      ? inner.code
      : "";
  const host = new URL(base).hostname;
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused (ECONNREFUSED)";
    case "ENOTFOUND":
      return `no such host "${host}" (ENOTFOUND)`;
    case "EAI_AGAIN":
      return `the name "${host}" could not be resolved now (EAI_AGAIN)`;
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return `the connection was closed before an answer (${code})`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `no route to the host (${code})`;
    default: {
      const message = inner?.message ?? String(error);
      return code === "" ? message : `${message} (${code})`;
    }
  }
}

function checkedUrl(text: string): string {
  const refuse = (why: string): never => {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot create a Prometheus client for "${redactUserInfo(text)}": ${why}`,
    );
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse("it is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return refuse("it must be an http:// or https:// URL");
  if (url.username !== "" || url.password !== "")
    return refuse(
      "it holds credentials: give a bearer token instead (--prometheus-bearer-token-file)",
    );
  if (url.search !== "" || url.hash !== "")
    return refuse("it must have no query and no fragment");
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** The URL without its `user:password@`, for messages. */
export function redactUserInfo(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1[redacted]@");
}

function positive(name: string, value: number): number {
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw new FlotillaError(
    "invalid_argument",
    `Cannot create a Prometheus client: ${name} must be a positive whole number, not ${String(value)}`,
  );
}

/** 10000 → "10s", 90000 → "90s", 120000 → "2m", 250 → "250ms". */
function formatMs(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${String(ms / 60_000)}m`;
  if (ms % 1_000 === 0) return `${String(ms / 1_000)}s`;
  return `${String(ms)}ms`;
}
