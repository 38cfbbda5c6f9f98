/**
 * The hub's part of a Kustomize bundle (docs/bundles.md#kustomize-bundles): the bundle's files
 * written into a temporary directory and `kubectl kustomize DIR` run once per distinct directory
 * (the bundle's `kustomize.dir`, or its top, and each target customization's), at apply time.
 * Each render's objects are then what the clusters given that directory get, through the same
 * namespace rules and patches as plain manifests. Kustomize's default load restrictor stays on
 * (a kustomization reads only files below its own directory), remote bases and `helmCharts` are
 * refused before kustomize runs: the hub fetches nothing from the network for a bundle.
 */
import { join } from "node:path";
import {
  compact,
  joinPath,
  KUSTOMIZATION_FILES,
  kustomizationFileIn,
  type FleetBundleSpec,
  type PlanWarning,
  type Problem,
} from "@flotilla/core";
import { runTool } from "@flotilla/node";
import {
  MAX_BUNDLE_CONTENT_BYTES,
  type KubernetesObject,
} from "@flotilla/protocol";
import { parse } from "yaml";
import { writeBundleFiles, type BundleFile } from "./bundle-files.js";
import { parseManifestObjects } from "./manifest-objects.js";

/** How the hub runs kustomize; absent: Kustomize bundles are refused. */
export interface KustomizeSupport {
  /** The kubectl binary (hub option `kubectl`: `--kubectl`, `FLOTILLA_KUBECTL`). */
  readonly kubectl: string;
  /** How long one render may take; default runTool's. */
  readonly timeoutMs?: number;
}

/** What {@link kustomizeObjects} works from. */
export interface KustomizeBundleInput {
  readonly spec: FleetBundleSpec;
  readonly files: readonly BundleFile[];
  readonly support?: KustomizeSupport;
  readonly signal?: AbortSignal;
}

/** The objects of each render: the bundle's, and each customization's with a `kustomize.dir`. */
export interface KustomizeRender {
  readonly objects: readonly KubernetesObject[];
  readonly customizations: ReadonlyMap<number, readonly KubernetesObject[]>;
  readonly warnings: readonly PlanWarning[];
}

/** Whether the hub renders `spec` with kustomize: fleet.yaml `kustomize` anywhere, or a top kustomization. */
export function isKustomizeBundle(
  spec: FleetBundleSpec,
  files: readonly BundleFile[],
): boolean {
  if (spec.helm !== undefined) return false;
  return (
    spec.kustomize !== undefined ||
    spec.targetCustomizations.some((c) => c.kustomize !== undefined) ||
    kustomizationFileIn("", new Set(files.map((f) => f.path))) !== undefined
  );
}

/** One directory to render, and the field that chose it (for problems). */
interface KustomizeDir {
  readonly dir: string;
  readonly field: string;
  /** Whether the user named the directory (rather than the bundle's top by default). */
  readonly named: boolean;
}

/** The distinct directories to render: the bundle's first, then the customizations' in order. */
function kustomizeDirs(spec: FleetBundleSpec): {
  readonly bundle: KustomizeDir;
  readonly customizations: Map<number, KustomizeDir>;
} {
  const bundle: KustomizeDir = {
    dir: spec.kustomize?.dir ?? "",
    field: spec.kustomize === undefined ? "bundle" : "bundle.kustomize.dir",
    named: spec.kustomize !== undefined,
  };
  const customizations = new Map<number, KustomizeDir>();
  spec.targetCustomizations.forEach((c, i) => {
    if (c.doNotDeploy || c.kustomize === undefined) return;
    customizations.set(i, {
      dir: c.kustomize.dir,
      field: `bundle.targetCustomizations[${String(i)}].kustomize.dir`,
      named: true,
    });
  });
  return { bundle, customizations };
}

/** A `resources`/`bases`/`components` entry kustomize would fetch from the network. */
export function isRemoteEntry(entry: string): boolean {
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ||
    /^(git@|git::|github\.com\/|gitlab\.com\/|bitbucket\.org\/)/i.test(entry) ||
    /[?&]ref=/.test(entry)
  );
}

const REFERENCE_KEYS = ["resources", "bases", "components"];

/** Problems of one kustomization file's contents: not YAML, a remote entry, `helmCharts`. */
export function kustomizationProblems(
  file: BundleFile,
  field: string,
): Problem[] {
  let doc: unknown;
  try {
    doc = parse(new TextDecoder("utf-8", { fatal: true }).decode(file.bytes));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return [
      {
        path: field,
        message: `is not a valid kustomization: not YAML: ${(why.split("\n")[0] ?? why).replace(/:$/, "")}`,
      },
    ];
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc))
    return [
      {
        path: field,
        message: "is not a valid kustomization: it must be a YAML mapping",
      },
    ];
  const record = doc as Record<string, unknown>;
  const problems: Problem[] = [];
  for (const key of REFERENCE_KEYS) {
    const entries = record[key];
    if (!Array.isArray(entries)) continue;
    entries.forEach((entry: unknown, i) => {
      if (typeof entry === "string" && isRemoteEntry(entry))
        problems.push({
          path: joinPath(joinPath(field, key), i),
          message:
            "is a remote base, which the hub does not fetch: vendor it into the bundle directory and refer to it by a relative path",
          value: entry,
        });
    });
  }
  if (record["helmCharts"] !== undefined)
    problems.push({
      path: joinPath(field, "helmCharts"),
      message:
        "is not supported: kustomize runs without --enable-helm; make the chart a Helm bundle of its own, or render it into the directory",
    });
  return problems;
}

/** The message of kustomize's failure without the temporary directory's path. */
function kustomizeCause(message: string, tmp: string): string {
  return message.split(`${tmp}/`).join("").split(tmp).join(".");
}

/** runTool's message for a tool that is not there (run-tool.ts). */
const NOT_INSTALLED = / is not installed \(not found/;

/**
 * Renders `dir` (written under `root`) with kubectl kustomize: its objects, or problems at `at`
 * (the bundle's `kustomize` field, `bundleField`, when kubectl itself is missing).
 */
async function render(
  support: KustomizeSupport,
  root: string,
  target: KustomizeDir,
  where: {
    readonly kustomization: string;
    readonly at: string;
    readonly bundleField: string;
  },
  signal: AbortSignal | undefined,
): Promise<
  | { readonly ok: true; readonly objects: KubernetesObject[] }
  | { readonly ok: false; readonly problems: readonly Problem[] }
> {
  const { kustomization, at } = where;
  const shown = target.dir === "" ? "." : target.dir;
  const ran = await runTool(
    support.kubectl,
    ["kustomize", join(root, ...target.dir.split("/").filter(Boolean))],
    {
      cwd: root,
      maxOutputBytes: MAX_BUNDLE_CONTENT_BYTES,
      configuredBy: "--kubectl or FLOTILLA_KUBECTL",
      ...compact({ signal, timeoutMs: support.timeoutMs }),
    },
  );
  if (!ran.ok)
    return {
      ok: false,
      problems: ran.problems.map((p) =>
        NOT_INSTALLED.test(p.message)
          ? {
              path: where.bundleField,
              message: `Kustomize bundles need kubectl on the hub: ${p.message}`,
            }
          : {
              path: at,
              message: `${kustomization} does not build: ${kustomizeCause(p.message, root)}`,
            },
      ),
    };
  const parsed = parseManifestObjects(
    [
      {
        path: `kustomize build ${shown}`,
        bytes: new TextEncoder().encode(ran.value.stdout),
        field: at,
      },
    ],
    at,
  );
  return parsed.ok
    ? { ok: true, objects: parsed.value }
    : { ok: false, problems: parsed.problems };
}

/**
 * Renders a Kustomize bundle's directories; undefined when something failed (the problems are
 * added to `problems`, at `bundle.files[i]` for a kustomization file and at the `kustomize.dir`
 * field for a directory).
 */
export async function kustomizeObjects(
  input: KustomizeBundleInput,
  problems: Problem[],
): Promise<KustomizeRender | undefined> {
  const { spec, files, support, signal } = input;
  const before = problems.length;
  const paths = new Set(files.map((f) => f.path));
  const fileField = (path: string): string =>
    `bundle.files[${String(files.findIndex((f) => f.path === path))}]`;
  files.forEach((file, i) => {
    const base = file.path.split("/").at(-1) ?? "";
    if (KUSTOMIZATION_FILES.includes(base))
      problems.push(
        ...kustomizationProblems(file, `bundle.files[${String(i)}]`),
      );
  });
  const dirs = kustomizeDirs(spec);
  const warnings: PlanWarning[] = [];
  const kustomizations = new Map<string, string>();
  for (const target of [dirs.bundle, ...dirs.customizations.values()]) {
    const file = kustomizationFileIn(target.dir, paths);
    if (file !== undefined) {
      kustomizations.set(target.dir, file);
      continue;
    }
    if (!target.named) {
      warnings.push({
        code: "NoKustomization",
        message: `the bundle directory's top holds no ${KUSTOMIZATION_FILES.join(", ")}: clusters that no customization gives a kustomize.dir receive nothing`,
      });
      continue;
    }
    const inside =
      target.dir === "" ||
      [...paths].some((p) => p.startsWith(`${target.dir}/`));
    problems.push({
      path: target.field,
      message: inside
        ? `names a directory without a kustomization: none of ${KUSTOMIZATION_FILES.join(", ")} is in it`
        : "is not a directory of the bundle",
      value: target.dir === "" ? "." : target.dir,
    });
  }
  if (problems.length > before) return undefined;
  if (support === undefined) {
    problems.push({
      path: dirs.bundle.field,
      message:
        "Kustomize bundles need kubectl on the hub, and this hub is not configured with it",
    });
    return undefined;
  }
  const rendered = new Map<string, KubernetesObject[]>();
  const work = await writeBundleFiles(files);
  try {
    for (const target of [dirs.bundle, ...dirs.customizations.values()]) {
      const kustomization = kustomizations.get(target.dir);
      if (kustomization === undefined || rendered.has(target.dir)) continue;
      const result = await render(
        support,
        work.path,
        target,
        {
          kustomization,
          at: fileField(kustomization),
          bundleField: dirs.bundle.field,
        },
        signal,
      );
      if (result.ok) rendered.set(target.dir, result.objects);
      else problems.push(...result.problems);
      // kubectl missing is the same for every directory: say it once.
      if (
        !result.ok &&
        result.problems.some((p) => NOT_INSTALLED.test(p.message))
      )
        break;
    }
  } finally {
    await work.remove();
  }
  if (problems.length > before) return undefined;
  const customizations = new Map<number, readonly KubernetesObject[]>();
  for (const [i, target] of dirs.customizations)
    customizations.set(i, rendered.get(target.dir) ?? []);
  return {
    objects: rendered.get(dirs.bundle.dir) ?? [],
    customizations,
    warnings,
  };
}
