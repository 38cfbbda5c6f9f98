/**
 * The hub's part of a Helm bundle (docs/bundles.md#helm-bundles): the chart packaged from the
 * bundle's files (`helm dependency build` when Chart.yaml's dependencies are not vendored in
 * `charts/`, then `helm package`) or fetched from its repository (chart-source.ts), the values
 * files read, and a trial `helm template` of every content variant with default capabilities and
 * without valuesFrom, so that a chart that cannot render is refused at apply time, naming the
 * cause. The agent renders again on its cluster with the cluster's capabilities.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  compact,
  fail,
  helmValuesFor,
  isLocalChart,
  releaseNameOf,
  type FleetBundleSpec,
  joinPath,
  localChartDir,
  ok,
  type HelmOptions,
  type HelmValues,
  type Problem,
  type Result,
} from "@flotilla/core";
import { helmTemplateArgs, runHelm } from "@flotilla/node";
import {
  MAX_BUNDLE_CONTENT_BYTES,
  sha256Digest,
  type BundleHelm,
} from "@flotilla/protocol";
import { parse } from "yaml";
import { writeBundleFiles, type BundleFile } from "./bundle-files.js";
import type { ContentVariant } from "./bundle-render.js";
import type { ChartFetcher } from "./chart-source.js";

/** How the hub runs helm and fetches charts; absent: Helm bundles are refused. */
export interface HelmSupport {
  /** The helm binary (hub option `helm`: `--helm`, `FLOTILLA_HELM`). */
  readonly helm: string;
  /** Fetches charts that are not in the bundle directory; absent: such charts are refused. */
  readonly fetcher?: ChartFetcher;
}

/** Where a failure goes: `bundle.helm…` field paths. */
const at = (path: string, key: string): string => joinPath(path, key);

/** The Chart.yaml dependencies that `charts/` does not hold (as a directory or a `.tgz`). */
function missingDependencies(
  files: readonly BundleFile[],
  dir: string,
): string[] {
  const prefix = dir === "" ? "" : `${dir}/`;
  const chartYaml = files.find((f) => f.path === `${prefix}Chart.yaml`);
  if (chartYaml === undefined) return [];
  let doc: unknown;
  try {
    doc = parse(new TextDecoder().decode(chartYaml.bytes));
  } catch {
    return []; // helm package reports a broken Chart.yaml itself.
  }
  const deps =
    typeof doc === "object" && doc !== null && "dependencies" in doc
      ? (doc as { dependencies?: unknown }).dependencies
      : undefined;
  if (!Array.isArray(deps)) return [];
  const vendored = (name: string): boolean =>
    files.some(
      (f) =>
        f.path.startsWith(`${prefix}charts/${name}/`) ||
        (f.path.startsWith(`${prefix}charts/${name}-`) &&
          f.path.endsWith(".tgz")),
    );
  return deps
    .map((d: unknown) =>
      typeof d === "object" && d !== null && "name" in d ? String(d.name) : "",
    )
    .filter((name) => name !== "" && !vendored(name));
}

/** Packages the chart at `options.chart` of the bundle's files; problems at `path`. */
export async function packageLocalChart(
  helm: string,
  files: readonly BundleFile[],
  options: HelmOptions,
  path: string,
  signal?: AbortSignal,
): Promise<Result<Uint8Array>> {
  const dir = localChartDir(options);
  const chartYaml = dir === "" ? "Chart.yaml" : `${dir}/Chart.yaml`;
  if (!files.some((f) => f.path === chartYaml))
    return fail([
      {
        path: at(path, "chart"),
        message: `names no chart of the bundle: ${chartYaml} is not among its files`,
        value: options.chart ?? ".",
      },
    ]);
  const work = await writeBundleFiles(files, "bundle");
  const out = join(work.path, "out");
  const chartPath = join(
    work.path,
    "bundle",
    ...dir.split("/").filter(Boolean),
  );
  const run = (args: string[]) =>
    runHelm(helm, args, { cwd: chartPath, ...(signal ? { signal } : {}) });
  try {
    if (
      !options.disableDependencyUpdate &&
      missingDependencies(files, dir).length > 0
    ) {
      const built = await run(["dependency", "build", chartPath]);
      if (!built.ok) return chartFailure(path, chartYaml, built.problems);
    }
    const packaged = await run(["package", chartPath, "--destination", out]);
    if (!packaged.ok) return chartFailure(path, chartYaml, packaged.problems);
    const [archive] = await readdir(out);
    if (archive === undefined)
      return chartFailure(path, chartYaml, [
        { path: "", message: "helm package wrote no archive" },
      ]);
    const bytes = new Uint8Array(await readFile(join(out, archive)));
    if (bytes.byteLength > MAX_BUNDLE_CONTENT_BYTES)
      return fail([
        {
          path: at(path, "chart"),
          message: `the packaged chart ${dir === "" ? "." : dir} is ${String(bytes.byteLength)} bytes, more than the ${String(MAX_BUNDLE_CONTENT_BYTES)} a bundle's content may hold`,
        },
      ]);
    return ok(bytes);
  } finally {
    await work.remove();
  }
}

function chartFailure(
  path: string,
  chartYaml: string,
  problems: readonly Problem[],
): Result<never> {
  return fail(
    problems.map((p) => ({
      path: at(path, "chart"),
      message: `the chart of ${chartYaml} cannot be packaged: ${p.message}`,
    })),
  );
}

/**
 * The values of each of `paths` (valuesFiles) read from the bundle's files: problems name the
 * file (at `field`, `bundle.helm.valuesFiles[1]`) and why it is not a YAML mapping.
 */
export function readValuesFiles(
  files: readonly BundleFile[],
  paths: readonly { readonly path: string; readonly field: string }[],
): Result<Map<string, HelmValues>> {
  const problems: Problem[] = [];
  const out = new Map<string, HelmValues>();
  for (const { path, field } of paths) {
    if (out.has(path)) continue;
    const file = files.find((f) => f.path === path.replace(/^\.\//, ""));
    if (file === undefined) {
      problems.push({
        path: field,
        message: "is not a file of the bundle",
        value: path,
      });
      continue;
    }
    let doc: unknown;
    try {
      doc = parse(new TextDecoder("utf-8", { fatal: true }).decode(file.bytes));
    } catch (error) {
      problems.push({
        path: field,
        message: `${path} is not YAML: ${error instanceof Error ? error.message : String(error)}`,
        value: path,
      });
      continue;
    }
    if (doc === null || doc === undefined) out.set(path, {});
    else if (typeof doc === "object" && !Array.isArray(doc))
      out.set(path, doc as HelmValues);
    else
      problems.push({
        path: field,
        message: `${path} must hold a mapping of values`,
        value: path,
      });
  }
  return problems.length > 0 ? fail(problems) : ok(out);
}

/** The chart archive of a Helm bundle: packaged from its files, or fetched. */
export async function chartArchive(
  support: HelmSupport | undefined,
  files: readonly BundleFile[],
  options: HelmOptions,
  path: string,
  signal?: AbortSignal,
): Promise<Result<Uint8Array>> {
  if (support === undefined)
    return fail([
      {
        path,
        message:
          "Helm bundles need helm on the hub, and this hub is not configured with it",
      },
    ]);
  if (isLocalChart(options))
    return packageLocalChart(support.helm, files, options, path, signal);
  if (support.fetcher === undefined)
    return fail([
      {
        path: at(path, "chart"),
        message:
          "is a chart from a repository or registry, which this hub is not configured to fetch; put the chart in the bundle directory",
        value: options.chart,
      },
    ]);
  const fetched = await support.fetcher.fetch(
    {
      chart: options.chart ?? "",
      ...(options.repo === undefined ? {} : { repo: options.repo }),
      ...(options.version === undefined ? {} : { version: options.version }),
    },
    signal,
  );
  if (!fetched.ok)
    return fail(
      fetched.problems.map((p) => ({
        ...p,
        path: at(path, "chart"),
      })),
    );
  return ok(fetched.value.archive);
}

/** How {@link renderChart} renders: the cluster's Kubernetes version (`--kube-version`), if known. */
export interface ChartRenderOptions {
  readonly kubeVersion?: string;
  readonly signal?: AbortSignal;
}

/**
 * `helm template` of `helm` (one content's chart and merged values, without valuesFrom): the
 * rendered manifests, or helm's error.
 */
export async function renderChart(
  helmBinary: string,
  helm: BundleHelm,
  { kubeVersion, signal }: ChartRenderOptions = {},
): Promise<Result<string>> {
  const work = await mkdtemp(join(tmpdir(), "flotilla-helm-render-"));
  try {
    const chart = join(work, "chart.tgz");
    const values = join(work, "values.json");
    await writeFile(chart, Buffer.from(helm.chart, "base64"));
    await writeFile(values, JSON.stringify(helm.values));
    const rendered = await runHelm(
      helmBinary,
      helmTemplateArgs(
        helm,
        chart,
        [values],
        kubeVersion === undefined
          ? undefined
          : { kubeVersion, apiVersions: [] },
      ),
      signal ? { signal } : {},
    );
    return rendered.ok ? ok(rendered.value.stdout) : rendered;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * A trial `helm template` of `helm` (one content's chart and values, default capabilities, no
 * valuesFrom): helm's error as the problem, at `path`, naming `variant`.
 */
export async function trialRender(
  helmBinary: string,
  helm: BundleHelm,
  variant: string,
  path: string,
  signal?: AbortSignal,
): Promise<Problem[]> {
  const rendered = await renderChart(helmBinary, helm, compact({ signal }));
  if (rendered.ok) return [];
  return rendered.problems.map((p) => ({
    path,
    message: `the chart does not render for ${variant}: ${p.message}`,
  }));
}

/** What {@link helmVariants} works from. */
export interface HelmBundleInput {
  readonly name: string;
  readonly spec: FleetBundleSpec;
  readonly files: readonly BundleFile[];
  readonly variants: readonly ContentVariant[];
  readonly support?: HelmSupport;
  readonly signal?: AbortSignal;
}

/** Every valuesFiles path of the bundle and its customizations, with its field path. */
function valuesFilePaths(
  spec: FleetBundleSpec,
): { readonly path: string; readonly field: string }[] {
  const out = (spec.helm?.valuesFiles ?? []).map((path, i) => ({
    path,
    field: `bundle.helm.valuesFiles[${String(i)}]`,
  }));
  spec.targetCustomizations.forEach((c, i) => {
    (c.helm?.valuesFiles ?? []).forEach((path, j) => {
      out.push({
        path,
        field: `bundle.targetCustomizations[${String(i)}].helm.valuesFiles[${String(j)}]`,
      });
    });
  });
  return out;
}

/**
 * A Helm bundle's variants with their chart and values (docs/bundles.md#value-merge-order), each
 * trial-rendered; undefined when something failed (the problems are added to `problems`).
 * `chartDigest` is the fetched archive's digest (a local chart's files are in the revision).
 */
export async function helmVariants(
  input: HelmBundleInput,
  problems: Problem[],
): Promise<
  | { readonly variants: ContentVariant[]; readonly chartDigest: string }
  | undefined
> {
  const { spec, signal } = input;
  const options = spec.helm;
  if (options === undefined) return undefined;
  const before = problems.length;
  const values = readValuesFiles(input.files, valuesFilePaths(spec));
  if (!values.ok) problems.push(...values.problems);
  const archive = await chartArchive(
    input.support,
    input.files,
    options,
    "bundle.helm",
    signal,
  );
  if (!archive.ok) problems.push(...archive.problems);
  if (!values.ok || !archive.ok || input.support === undefined)
    return undefined;
  const chart = Buffer.from(archive.value).toString("base64");
  const fileValues = (path: string): HelmValues => values.value.get(path) ?? {};
  const variants = input.variants.map((variant): ContentVariant => {
    const layer =
      variant.customization === undefined
        ? undefined
        : spec.targetCustomizations[variant.customization]?.helm;
    const merged = helmValuesFor(options, layer, fileValues);
    return {
      ...variant,
      helm: {
        chart,
        releaseName: releaseNameOf(options, input.name),
        namespace: variant.namespace === "" ? "default" : variant.namespace,
        values: merged.values,
        valuesFrom: merged.valuesFrom,
        skipSchemaValidation: options.skipSchemaValidation,
      },
    };
  });
  for (const variant of variants) {
    if (variant.helm === undefined) continue;
    const where =
      variant.customization === undefined
        ? "bundle.helm"
        : `bundle.targetCustomizations[${String(variant.customization)}].helm`;
    problems.push(
      ...(await trialRender(
        input.support.helm,
        variant.helm,
        variant.customization === undefined
          ? `namespace ${JSON.stringify(variant.namespace)}`
          : `targetCustomizations[${String(variant.customization)}]`,
        where,
        signal,
      )),
    );
  }
  if (problems.length > before) return undefined;
  return {
    variants,
    chartDigest: isLocalChart(options) ? "" : sha256Digest(archive.value),
  };
}
