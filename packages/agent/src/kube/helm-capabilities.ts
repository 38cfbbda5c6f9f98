/**
 * The cluster's capabilities for `helm template` (docs/bundles.md#where-rendering-happens-and-why):
 * the API server's version (`GET /version`) and what discovery serves, as group/versions and
 * group/version/Kinds, so that `.Capabilities.KubeVersion` and `.Capabilities.APIVersions.Has` in a
 * chart answer as they would on the cluster. Read once and kept for `ttlMs`; a failed read is not
 * kept, and `invalidate()` (a new connection) makes the next render read again.
 */
import { abortable, type Clock, type HelmCapabilities } from "@flotilla/node";
import type { KubeClient, KubeObject } from "./kube-client.js";

/** The capabilities, read when needed. */
export interface CapabilitiesSource {
  current(options?: {
    readonly signal?: AbortSignal;
  }): Promise<HelmCapabilities>;
  /** Forgets what was read: the next `current()` reads discovery again. */
  invalidate(): void;
}

/** How long capabilities are kept by default: CRDs installed since appear within this. */
export const CAPABILITIES_TTL_MS = 5 * 60_000;

/** Group/versions whose resource lists are read at the same time, at most. */
const PARALLEL_READS = 8;

function records(value: unknown): KubeObject[] {
  return Array.isArray(value)
    ? value.filter(
        (v): v is KubeObject =>
          typeof v === "object" && v !== null && !Array.isArray(v),
      )
    : [];
}

/** Every group/version the server serves: `/api`'s core versions, then `/apis`' groups. */
async function groupVersions(
  client: KubeClient,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const options = signal ? { signal } : {};
  const core = await client.discovery("/api", options);
  const groups = await client.discovery("/apis", options);
  const out = Array.isArray(core.versions)
    ? core.versions.filter((v): v is string => typeof v === "string")
    : [];
  for (const group of records(groups.groups))
    for (const v of records(group.versions))
      if (typeof v.groupVersion === "string") out.push(v.groupVersion);
  return [...new Set(out)];
}

/** The Kinds of one group/version; none when its discovery fails (an aggregated API that is down). */
async function kindsOf(
  client: KubeClient,
  groupVersion: string,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const path = groupVersion.includes("/")
    ? `/apis/${groupVersion}`
    : `/api/${groupVersion}`;
  let list: KubeObject;
  try {
    list = await client.discovery(path, signal ? { signal } : {});
  } catch {
    signal?.throwIfAborted();
    return [];
  }
  const kinds = records(list.resources)
    .filter((r) => typeof r.name === "string" && !r.name.includes("/"))
    .map((r) => r.kind)
    .filter((k): k is string => typeof k === "string" && k !== "");
  return [...new Set(kinds)].map((kind) => `${groupVersion}/${kind}`);
}

/** Reads the version and discovery once. */
export async function readCapabilities(
  client: KubeClient,
  signal?: AbortSignal,
): Promise<HelmCapabilities> {
  const version = await client.discovery("/version", signal ? { signal } : {});
  if (typeof version.gitVersion !== "string" || version.gitVersion === "")
    throw new Error("GET /version answered without a gitVersion");
  const versions = await groupVersions(client, signal);
  const apiVersions = [...versions];
  for (let i = 0; i < versions.length; i += PARALLEL_READS) {
    const batch = versions.slice(i, i + PARALLEL_READS);
    for (const kinds of await Promise.all(
      batch.map((gv) => kindsOf(client, gv, signal)),
    ))
      apiVersions.push(...kinds);
  }
  return { kubeVersion: version.gitVersion, apiVersions };
}

/** How long one read of version and discovery may take. */
const READ_TIMEOUT_MS = 30_000;

/**
 * A {@link CapabilitiesSource} on `client`, keeping a read for `ttlMs`. Renders that need a read
 * at the same time share it; each stops waiting when its own signal aborts.
 */
export function createCapabilitiesSource(
  deps: { readonly client: KubeClient; readonly clock: Clock },
  options: { readonly ttlMs?: number; readonly readTimeoutMs?: number } = {},
): CapabilitiesSource {
  const ttlMs = options.ttlMs ?? CAPABILITIES_TTL_MS;
  const readTimeoutMs = options.readTimeoutMs ?? READ_TIMEOUT_MS;
  let kept:
    { readonly at: number; readonly value: HelmCapabilities } | undefined;
  let reading: Promise<HelmCapabilities> | undefined;
  const read = (): Promise<HelmCapabilities> => {
    const at = deps.clock.now();
    const started = readCapabilities(
      deps.client,
      AbortSignal.timeout(readTimeoutMs),
    ).then((value) => {
      if (reading === started) kept = { at, value };
      return value;
    });
    const done = (): void => {
      if (reading === started) reading = undefined;
    };
    started.then(done, done);
    reading = started;
    return started;
  };
  return {
    current(callOptions = {}) {
      if (kept !== undefined && deps.clock.now() - kept.at < ttlMs)
        return Promise.resolve(kept.value);
      return abortable(reading ?? read(), callOptions.signal);
    },
    invalidate() {
      kept = undefined;
      reading = undefined;
    },
  };
}
