/**
 * Rendering a Helm bundle on its cluster (docs/bundles.md#where-rendering-happens-and-why): the
 * packaged chart and the merged values written to a private temporary directory, each `valuesFrom`
 * entry read from the cluster's ConfigMaps and Secrets (values never leave the cluster) and merged
 * last in order, and `helm template` of the real helm run with the cluster's capabilities
 * (helm-capabilities.ts). The output's documents are the objects to apply; the caller hands them to
 * the gateway like any bundle's manifests. A failure throws a FlotillaError whose message names the
 * cause (the valuesFrom source, or helm's own message): the bundle fails, nothing is applied.
 *
 * Renders are kept (docs/bundles.md#the-render-cache) by everything they depend on: the content's
 * chart and values, what the valuesFrom entries hold now, and the capabilities; a few per bundle.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalJson, FlotillaError, showValue } from "@flotilla/core";
import {
  helmTemplateArgs,
  parseDocuments,
  runHelm,
  type HelmCapabilities,
} from "@flotilla/node";
import {
  helmReleaseNamespace,
  sha256Digest,
  type BundleHelm,
  type BundleValuesFrom,
  type KubernetesObject,
} from "@flotilla/protocol";
import { parse } from "yaml";
import type { CapabilitiesSource } from "./helm-capabilities.js";
import type { KubeClient } from "./kube-client.js";

/** Options of {@link createHelmRenderer}. */
export interface HelmRendererOptions {
  /** The helm binary, a path or a name on PATH (agent option `--helm`). */
  readonly helm: string;
  /** helm template is killed after this long; default 60 s. */
  readonly timeoutMs?: number;
  /** helm template printing more than this fails the render; default 64 MiB. */
  readonly maxOutputBytes?: number;
  /** Renders kept per bundle; default 3. */
  readonly keepPerBundle?: number;
  /** Bundles whose renders are kept, at most (the least recently rendered go first); default 256. */
  readonly keepBundles?: number;
}

/** What one render works from: a Helm bundle's content. */
export interface HelmRenderInput {
  readonly bundle: string;
  readonly helm: BundleHelm;
  /** fleet.yaml `namespace`: then the release namespace. */
  readonly targetNamespace?: string;
}

/** Renders Helm bundles on one cluster. */
export interface HelmRenderer {
  /** The rendered objects; throws a FlotillaError naming why it cannot render. */
  render(
    input: HelmRenderInput,
    options?: { readonly signal?: AbortSignal },
  ): Promise<KubernetesObject[]>;
  /** helm template runs so far (the render cache's misses), for tests and metrics. */
  readonly runs: number;
}

/** Lines of helm's message kept in a bundle's error. */
const MESSAGE_LINES = 6;
const MESSAGE_CHARS = 1_000;

/** Helm's message, trimmed to its first lines. */
function trimmed(message: string): string {
  const lines = message.trim().split("\n").slice(0, MESSAGE_LINES);
  const text = lines.join("\n");
  return text.length > MESSAGE_CHARS
    ? `${text.slice(0, MESSAGE_CHARS)}…`
    : text;
}

function failure(message: string): FlotillaError {
  return new FlotillaError("failed_precondition", message);
}

/** `ConfigMap ns/name key "k"`, as errors name a valuesFrom source. */
function sourceName(ref: BundleValuesFrom, namespace: string): string {
  return `${ref.kind} ${namespace}/${ref.name} key ${showValue(ref.key)}`;
}

/** What one valuesFrom entry holds: its text (for the cache key) and its values. */
interface SourceValues {
  readonly text: string;
  readonly values: Readonly<Record<string, unknown>>;
}

/** Reads one valuesFrom entry from the cluster; throws naming it when it cannot be used. */
async function readSource(
  client: KubeClient,
  ref: BundleValuesFrom,
  releaseNamespace: string,
  signal: AbortSignal | undefined,
): Promise<SourceValues> {
  const namespace = ref.namespace ?? releaseNamespace;
  const what = `valuesFrom ${sourceName(ref, namespace)}`;
  let object;
  try {
    object = await client.get(
      { apiVersion: "v1", kind: ref.kind, namespace, name: ref.name },
      signal ? { signal } : {},
    );
  } catch (error) {
    signal?.throwIfAborted();
    throw failure(
      `${what}: cannot be read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (object === undefined)
    throw failure(`${what}: the ${ref.kind} does not exist`);
  const data = object.data;
  const raw =
    typeof data === "object" && data !== null && !Array.isArray(data)
      ? (data as Record<string, unknown>)[ref.key]
      : undefined;
  if (typeof raw !== "string")
    throw failure(`${what}: the ${ref.kind} has no such key`);
  const text =
    ref.kind === "Secret" ? Buffer.from(raw, "base64").toString("utf8") : raw;
  let values: unknown;
  try {
    values = parse(text, { maxAliasCount: 100 });
  } catch (error) {
    throw failure(
      `${what}: is not YAML: ${trimmed(error instanceof Error ? error.message : String(error))}`,
    );
  }
  if (values === null || values === undefined) return { text, values: {} };
  if (typeof values !== "object" || Array.isArray(values))
    throw failure(`${what}: must hold a mapping of values`);
  return { text, values: values as Record<string, unknown> };
}

/** The objects in helm's output, in order; empty documents skipped. */
function renderedObjects(stdout: string): KubernetesObject[] {
  const docs = parseDocuments(stdout);
  if (!docs.ok) {
    const [p] = docs.problems;
    throw failure(
      `helm template printed YAML that cannot be read at line ${String(p?.line ?? 1)}: ${p?.message ?? ""}`,
    );
  }
  return docs.value.map((d) => d.value as KubernetesObject);
}

/** A small per-bundle LRU of renders by key. */
class RenderCache {
  readonly #bundles = new Map<string, Map<string, KubernetesObject[]>>();

  constructor(
    readonly perBundle: number,
    readonly bundles: number,
  ) {}

  get(bundle: string, key: string): KubernetesObject[] | undefined {
    const entries = this.#bundles.get(bundle);
    const hit = entries?.get(key);
    if (entries === undefined || hit === undefined) return undefined;
    this.#touch(bundle, entries);
    entries.delete(key);
    entries.set(key, hit);
    return hit;
  }

  set(bundle: string, key: string, objects: KubernetesObject[]): void {
    const entries =
      this.#bundles.get(bundle) ?? new Map<string, KubernetesObject[]>();
    this.#touch(bundle, entries);
    entries.set(key, objects);
    for (const old of entries.keys()) {
      if (entries.size <= this.perBundle) break;
      entries.delete(old);
    }
    for (const old of this.#bundles.keys()) {
      if (this.#bundles.size <= this.bundles) break;
      this.#bundles.delete(old);
    }
  }

  #touch(bundle: string, entries: Map<string, KubernetesObject[]>): void {
    this.#bundles.delete(bundle);
    this.#bundles.set(bundle, entries);
  }
}

/** Runs helm template in a private temporary directory. */
async function runTemplate(
  options: HelmRendererOptions,
  input: HelmRenderInput & { readonly namespace: string },
  sources: readonly SourceValues[],
  capabilities: HelmCapabilities,
  signal: AbortSignal | undefined,
): Promise<KubernetesObject[]> {
  const work = await mkdtemp(join(tmpdir(), "flotilla-helm-render-"));
  try {
    const chart = join(work, "chart.tgz");
    await writeFile(chart, Buffer.from(input.helm.chart, "base64"), {
      mode: 0o600,
    });
    const layers = [input.helm.values, ...sources.map((s) => s.values)];
    const files = layers.map((_, i) => join(work, `values-${String(i)}.json`));
    await Promise.all(
      layers.map((values, i) =>
        writeFile(files[i] ?? "", JSON.stringify(values), { mode: 0o600 }),
      ),
    );
    const rendered = await runHelm(
      options.helm,
      helmTemplateArgs(
        { ...input.helm, namespace: input.namespace },
        chart,
        files,
        capabilities,
      ),
      {
        timeoutMs: options.timeoutMs ?? 60_000,
        maxOutputBytes: options.maxOutputBytes ?? 64 * 1024 * 1024,
        ...(signal ? { signal } : {}),
      },
    );
    if (!rendered.ok) {
      signal?.throwIfAborted();
      throw failure(
        `the Helm chart does not render: ${trimmed(rendered.problems.map((p) => p.message).join("; "))}`,
      );
    }
    return renderedObjects(rendered.value.stdout);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** A renderer on `client` (valuesFrom reads) and `capabilities`. */
export function createHelmRenderer(
  deps: {
    readonly client: KubeClient;
    readonly capabilities: CapabilitiesSource;
  },
  options: HelmRendererOptions,
): HelmRenderer {
  const cache = new RenderCache(
    options.keepPerBundle ?? 3,
    options.keepBundles ?? 256,
  );
  let runs = 0;
  return {
    get runs() {
      return runs;
    },
    async render(input, callOptions = {}) {
      const { signal } = callOptions;
      const namespace = helmReleaseNamespace(input);
      const sources: SourceValues[] = [];
      for (const ref of input.helm.valuesFrom)
        sources.push(await readSource(deps.client, ref, namespace, signal));
      let capabilities: HelmCapabilities;
      try {
        capabilities = await deps.capabilities.current(callOptions);
      } catch (error) {
        signal?.throwIfAborted();
        throw failure(
          `cannot read the cluster's version and API discovery for helm template: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      const key = sha256Digest(
        new TextEncoder().encode(
          canonicalJson({
            helm: input.helm,
            namespace,
            sources: sources.map((s) => s.text),
            capabilities,
          }),
        ),
      );
      const kept = cache.get(input.bundle, key);
      if (kept !== undefined) return [...kept];
      runs += 1;
      const objects = await runTemplate(
        options,
        { ...input, namespace },
        sources,
        capabilities,
        signal,
      );
      cache.set(input.bundle, key, objects);
      return [...objects];
    },
  };
}
