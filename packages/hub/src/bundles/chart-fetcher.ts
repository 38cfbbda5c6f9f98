/**
 * The {@link ChartFetcher} that runs the real helm (`helm pull`): a chart by name from a
 * repository (`--repo`, `--version`), an `oci://` reference, or an archive URL
 * (docs/bundles.md#charts-from-repositories-and-registries). Each fetch gets a temporary
 * directory as helm's cache, configuration and data homes, so fetches share nothing and leave
 * nothing behind. helm downloads the archive the source serves as it is, so the same chart
 * version fetched twice gives the same bytes.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compact, fail, ok, problem, type Result } from "@flotilla/core";
import { runTool } from "@flotilla/node";
import { MAX_BUNDLE_CONTENT_BYTES } from "@flotilla/protocol";
import { parse as parseYaml } from "yaml";
import {
  credentialFor,
  loadChartCredentials,
  type ChartCredential,
} from "./chart-credentials.js";
import type {
  ChartFetcher,
  ChartReference,
  FetchedChart,
} from "./chart-source.js";

/** Options of {@link createHelmChartFetcher}. */
export interface HelmChartFetcherOptions {
  /** The helm binary (`--helm`); default `helm` on PATH. */
  readonly helm?: string;
  /** Private sources' credentials (`--chart-credentials`). */
  readonly credentials?: readonly ChartCredential[];
  /** One fetch may take this long; default 2 min. */
  readonly timeoutMs?: number;
  /** A larger archive is refused; default the bundle content limit. */
  readonly maxBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;

/** How a reference reads in messages: `chart` from `repo` at `version`. */
export function describeChart(reference: ChartReference): string {
  const where = reference.repo === undefined ? "" : ` from ${reference.repo}`;
  const at =
    reference.version === undefined ? "" : ` version ${reference.version}`;
  return `chart ${reference.chart}${where}${at}`;
}

/** Where the chart is downloaded from, to find its credentials. */
function locationOf(reference: ChartReference): string {
  return reference.repo ?? reference.chart;
}

function credentialArgs(credential: ChartCredential | undefined): string[] {
  if (credential === undefined) return [];
  return [
    ...(credential.username === undefined
      ? []
      : ["--username", credential.username]),
    ...(credential.password === undefined
      ? []
      : ["--password", credential.password]),
    ...(credential.caFile === undefined
      ? []
      : ["--ca-file", credential.caFile]),
    ...(credential.insecureSkipTLSVerify === true
      ? ["--insecure-skip-tls-verify"]
      : []),
    ...(credential.plainHttp === true ? ["--plain-http"] : []),
  ];
}

/** The arguments of `helm pull` for `reference` into `destination`. */
export function pullArgs(
  reference: ChartReference,
  destination: string,
  credential: ChartCredential | undefined,
): string[] {
  return [
    "pull",
    reference.chart,
    "--destination",
    destination,
    ...(reference.repo === undefined ? [] : ["--repo", reference.repo]),
    ...(reference.version === undefined
      ? []
      : ["--version", reference.version]),
    ...credentialArgs(credential),
  ];
}

/** What helm's error says went wrong, in words a user of fleet.yaml acts on. */
export function causeOf(message: string): string {
  if (/is not installed \(not found/.test(message)) return "helm cannot run";
  if (
    /401|403|unauthori[sz]ed|forbidden|authentication required|authorization failed|access denied/i.test(
      message,
    )
  )
    return "the source refused the credentials (missing or wrong: see --chart-credentials)";
  if (
    /version .* not found|no chart version found|no matching version/i.test(
      message,
    )
  )
    return "no version of the chart matches";
  // A registry answers a missing repository and a missing tag alike: REGISTRY/PATH:TAG: not found.
  if (/\S+:[^\s:/]+: not found/.test(message))
    return "the chart or that version does not exist in the registry";
  if (/not found|no chart name found|404/i.test(message))
    return "the chart or the source does not exist";
  if (
    /connection refused|no such host|i\/o timeout|dial tcp|could not be reached|certificate|tls:/i.test(
      message,
    )
  )
    return "the source cannot be reached";
  return "helm could not fetch it";
}

interface ChartYaml {
  readonly name?: unknown;
  readonly version?: unknown;
}

/** The chart's name and version out of its Chart.yaml (`helm show chart`). */
async function describeArchive(
  helm: string,
  archive: string,
  env: Readonly<Record<string, string>>,
): Promise<Result<{ name: string; version: string }>> {
  const shown = await runTool(helm, ["show", "chart", archive], {
    env,
    configuredBy: "--helm or FLOTILLA_HELM",
  });
  if (!shown.ok) return shown;
  const chart = parseYaml(shown.value.stdout) as ChartYaml | null;
  return typeof chart?.name === "string" && typeof chart.version === "string"
    ? ok({ name: chart.name, version: chart.version })
    : fail([problem("its Chart.yaml has no name or version")]);
}

/** Builds the fetcher; nothing runs until the first fetch. */
export function createHelmChartFetcher(
  options: HelmChartFetcherOptions = {},
): ChartFetcher {
  const helm = options.helm ?? "helm";
  const maxBytes = options.maxBytes ?? MAX_BUNDLE_CONTENT_BYTES;
  const credentials = options.credentials ?? [];
  return {
    async fetch(reference, signal) {
      const name = describeChart(reference);
      const refused = (why: string): Result<FetchedChart> =>
        fail([problem(`${name}: ${why}`)]);
      const work = await mkdtemp(join(tmpdir(), "flotilla-chart-"));
      try {
        const env = {
          HELM_CACHE_HOME: join(work, "cache"),
          HELM_CONFIG_HOME: join(work, "config"),
          HELM_DATA_HOME: join(work, "data"),
        };
        const destination = join(work, "out");
        await mkdir(destination);
        const pulled = await runTool(
          helm,
          pullArgs(
            reference,
            destination,
            credentialFor(credentials, locationOf(reference)),
          ),
          {
            env,
            timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
            configuredBy: "--helm or FLOTILLA_HELM",
            ...compact({ signal }),
          },
        );
        if (!pulled.ok) {
          const said = pulled.problems.map((p) => p.message).join("; ");
          return refused(`${causeOf(said)}: ${said}`);
        }
        const [file] = (await readdir(destination)).filter((f) =>
          f.endsWith(".tgz"),
        );
        if (file === undefined) return refused("helm pull wrote no archive");
        const archivePath = join(destination, file);
        const size = (await stat(archivePath)).size;
        if (size > maxBytes)
          return refused(
            `its archive is ${String(size)} bytes, over the bundle content limit of ${String(maxBytes)} bytes`,
          );
        const described = await describeArchive(helm, archivePath, env);
        if (!described.ok)
          return refused(described.problems.map((p) => p.message).join("; "));
        return ok({
          ...described.value,
          archive: new Uint8Array(await readFile(archivePath)),
        });
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
  };
}

/** The hub's settings of chart fetching (config.ts `charts`). */
export interface ChartFetchSettings {
  readonly helm: string;
  readonly credentialsFile: string | undefined;
  readonly timeoutMs: number;
}

/**
 * The hub's fetcher: its credentials file read at start (a bad file stops the start, with
 * problems whose paths start with the file's name).
 */
export async function chartFetcherOf(
  settings: ChartFetchSettings,
): Promise<Result<ChartFetcher>> {
  const file = settings.credentialsFile;
  const credentials =
    file === undefined ? ok([]) : await loadChartCredentials(file);
  if (!credentials.ok)
    return fail(
      credentials.problems.map((p) => ({
        ...p,
        path: p.path.startsWith(file ?? "") ? p.path : `${file ?? ""}${p.path}`,
      })),
    );
  return ok(
    createHelmChartFetcher({
      helm: settings.helm,
      credentials: credentials.value,
      timeoutMs: settings.timeoutMs,
    }),
  );
}
