/**
 * A real Prometheus server for metric-gate tests: Debian's `prometheus` (the package scripts/setup.sh
 * and .ci/run install) on a port of 127.0.0.1 it picks itself (read back from its log, so nothing
 * can take it in between), with a temporary configuration and storage directory, scraping the
 * targets a test names (see metrics-target.ts). Tests fail, never skip, when it is not installed.
 */
import { constants } from "node:fs";
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { FlotillaError } from "@flotilla/core";
import { startProcess, type TestProcess } from "./process.js";
import { waitFor } from "./wait-for.js";

/** Options of {@link startPrometheus}. */
export interface StartPrometheusOptions {
  /** `HOST:PORT` of each target whose `/metrics` is scraped (job `testkit`). */
  readonly targets: readonly string[];
  /** How often targets are scraped; default 1000 ms (Prometheus accepts 1s and less). */
  readonly scrapeIntervalMs?: number;
  /** The executable; default the first `prometheus` on PATH. */
  readonly binary?: string;
  /** How long the start may take until `/-/ready` answers 200; default 30000 ms. */
  readonly startTimeoutMs?: number;
}

/** One series of an instant query's answer. */
export interface PrometheusSample {
  readonly labels: Readonly<Record<string, string>>;
  /** NaN and ±Infinity as Prometheus wrote them ("NaN", "+Inf", "-Inf"). */
  readonly value: number;
}

/** A running Prometheus. */
export interface PrometheusServer extends AsyncDisposable {
  /** `http://127.0.0.1:PORT`, the base URL of its HTTP API. */
  readonly url: string;
  /**
   * Runs an instant query; a vector's series in the order Prometheus sent them, a scalar as one
   * sample without labels. Throws with Prometheus's error for a failed query or another result type.
   */
  query(promql: string): Promise<PrometheusSample[]>;
  /**
   * Runs `promql` until `predicate` holds for its samples (a scrape is needed before a new value
   * shows) and resolves with them; rejects after `timeoutMs` (default 15000) with the last answer.
   */
  waitForValue(
    promql: string,
    predicate: (samples: readonly PrometheusSample[]) => boolean,
    timeoutMs?: number,
  ): Promise<PrometheusSample[]>;
  /** The server's log so far, for failure messages. */
  logs(): string;
  /** Stops the server (SIGTERM, then SIGKILL) and removes its directory. Idempotent. */
  close(): Promise<void>;
}

const MISSING_BINARY_HELP =
  "run scripts/setup.sh or `apt-get install prometheus` (Debian/Ubuntu)";

/** Starts Prometheus scraping `targets` and resolves once it is ready. Use with `await using`. */
export async function startPrometheus(
  options: StartPrometheusOptions,
): Promise<PrometheusServer> {
  const intervalMs = options.scrapeIntervalMs ?? 1_000;
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 1)
    throw new FlotillaError(
      "invalid_argument",
      `Cannot start Prometheus: scrapeIntervalMs must be a whole number of milliseconds from 1, not ${String(intervalMs)}`,
    );
  const binary = options.binary ?? (await findPrometheus());
  const dir = await mkdtemp(join(tmpdir(), "flotilla-prometheus-"));
  const interval = `${String(intervalMs)}ms`;
  // JSON is YAML: no quoting rules to get wrong for the targets.
  const config = {
    global: {
      scrape_interval: interval,
      scrape_timeout: interval,
      evaluation_interval: interval,
    },
    scrape_configs: [
      {
        job_name: "testkit",
        static_configs: [{ targets: [...options.targets] }],
      },
    ],
  };
  const configFile = join(dir, "prometheus.yml");
  let server: TestProcess | undefined;
  const close = async (): Promise<void> => {
    await server?.stop(5_000);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await writeFile(configFile, JSON.stringify(config, null, 2));
    server = startProcess({
      name: "prometheus",
      command: binary,
      args: [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        // Port 0: Prometheus picks a free port and logs it ("Listening on" address=...).
        "--web.listen-address=127.0.0.1:0",
        "--log.level=info",
      ],
      cwd: dir,
    });
    const startTimeoutMs = options.startTimeoutMs ?? 30_000;
    const line = await server.waitForLine(
      /msg="Listening on" address=\S+/,
      startTimeoutMs,
    );
    const address = /address=(\S+)/.exec(line)?.[1] ?? "";
    const url = `http://${address}`;
    const running = server;
    await waitFor(() => isReady(url), {
      timeoutMs: startTimeoutMs,
      message: `Prometheus ${url}/-/ready to answer 200`,
    }).catch((error: unknown) => {
      throw new Error(`Prometheus did not become ready:\n${running.output()}`, {
        cause: error,
      });
    });
    const query = (promql: string): Promise<PrometheusSample[]> =>
      instantQuery(url, promql);
    return {
      url,
      query,
      async waitForValue(promql, predicate, timeoutMs = 15_000) {
        let last = "no answer yet";
        return await waitFor(
          async () => {
            const samples = await query(promql);
            last = JSON.stringify(samples);
            return predicate(samples) ? samples : undefined;
          },
          {
            timeoutMs,
            intervalMs: 100,
            message: `Prometheus to answer ${promql} as expected`,
          },
        ).catch((error: unknown) => {
          throw new Error(
            `${promql}: the last answer was ${last}; the predicate never held`,
            { cause: error },
          );
        });
      },
      logs: () => running.output(),
      close,
      [Symbol.asyncDispose]: close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The first executable `prometheus` on PATH. */
async function findPrometheus(): Promise<string> {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, "prometheus");
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  throw new FlotillaError(
    "failed_precondition",
    `Cannot start Prometheus: "prometheus" is not on PATH; ${MISSING_BINARY_HELP}`,
  );
}

async function isReady(url: string): Promise<boolean> {
  const response = await fetch(`${url}/-/ready`, {
    signal: AbortSignal.timeout(1_000),
  });
  await response.body?.cancel();
  return response.ok;
}

interface QueryAnswer {
  status?: string;
  error?: string;
  data?: {
    resultType?: string;
    result?: unknown;
  };
}

async function instantQuery(
  url: string,
  promql: string,
): Promise<PrometheusSample[]> {
  const response = await fetch(
    `${url}/api/v1/query?${new URLSearchParams({ query: promql }).toString()}`,
    { signal: AbortSignal.timeout(5_000) },
  );
  const answer = (await response.json()) as QueryAnswer;
  if (answer.status !== "success")
    throw new Error(
      `Prometheus refused ${promql}: ${answer.error ?? `HTTP ${String(response.status)}`}`,
    );
  const result = answer.data?.result;
  switch (answer.data?.resultType ?? "") {
    case "vector":
      return (
        result as { metric: Record<string, string>; value: [number, string] }[]
      ).map((series) => ({
        labels: series.metric,
        value: sampleNumber(series.value[1]),
      }));
    case "scalar":
      return [
        { labels: {}, value: sampleNumber((result as [number, string])[1]) },
      ];
    default:
      throw new Error(
        `Prometheus answered ${promql} with a ${String(answer.data?.resultType)}, not a vector or scalar`,
      );
  }
}

// Number("+Inf") is NaN.
function sampleNumber(text: string): number {
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  return Number(text);
}
