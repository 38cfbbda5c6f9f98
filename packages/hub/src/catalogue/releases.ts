/**
 * Operator releases (docs/engine.md#the-version-catalogue): Kubernetes versions and node images an
 * operator published to the hub for fleets whose drivers cannot discover them. They live in the
 * "releases" collection (one JetStream KV bucket, created with the configured replica count like
 * the others), are followed by every hub replica, and apply to every cluster (node images: every
 * pool of the image family).
 */
import {
  FlotillaError,
  compareKubernetesVersions,
  compareNodeImageVersions,
  formatKubernetesVersion,
  kubernetesVersionOf,
  parseKubernetesVersion,
  showValue,
  type Cluster,
  type Problem,
} from "@flotilla/core";
import { MAX_VERSION_LENGTH, NODE_IMAGE_VERSION } from "@flotilla/protocol";
import { z } from "zod";
import { encodeKeyToken } from "../store/keys.js";
import { defineCollection, type StateStore } from "../store/state-store.js";
import { followCollection } from "../store/follow-collection.js";

/** One published release. */
export type Release =
  | {
      readonly kind: "kubernetes";
      /** A full version without "v" ("1.30.4"). */
      readonly version: string;
      readonly lts?: true;
      readonly preview?: true;
      readonly addedAtMs: number;
      readonly addedBy: string;
    }
  | {
      readonly kind: "node-image";
      readonly family: string;
      readonly version: string;
      readonly addedAtMs: number;
      readonly addedBy: string;
    };

/** What an operator asks to publish (before validation). */
export interface ReleaseInput {
  readonly kind: string;
  readonly version: string;
  readonly family?: string;
  readonly lts?: boolean;
  readonly preview?: boolean;
}

/** `kubernetes 1.30.4` or `node-image ubuntu-22.04 202603.01.0`: how releases are named. */
export function releaseId(release: {
  readonly kind: string;
  readonly version: string;
  readonly family?: string;
}): string {
  return release.kind === "node-image"
    ? `node-image ${release.family ?? ""} ${release.version}`
    : `kubernetes ${release.version}`;
}

const RELEASES = defineCollection<Release>("releases", (value) =>
  z
    .discriminatedUnion("kind", [
      z.object({
        kind: z.literal("kubernetes"),
        version: z.string(),
        lts: z.literal(true).optional(),
        preview: z.literal(true).optional(),
        addedAtMs: z.number(),
        addedBy: z.string(),
      }),
      z.object({
        kind: z.literal("node-image"),
        family: z.string(),
        version: z.string(),
        addedAtMs: z.number(),
        addedBy: z.string(),
      }),
    ])
    .parse(value),
);

const FAMILY = /^[A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?$/;

function invalid(problems: Problem[]): FlotillaError {
  return FlotillaError.invalid("release", problems);
}

/**
 * Checks a release against its syntax and the fleet: a Kubernetes release older than the version
 * every cluster runs (or a node image older than every pool of its family) could never be used.
 */
export function validateRelease(
  input: ReleaseInput,
  clusters: readonly Cluster[],
  actor: string,
  nowMs: number,
): Release {
  const { version } = input;
  if (input.kind === "kubernetes") {
    const parsed = parseKubernetesVersion(version, "full");
    if (!parsed.ok || version.length > MAX_VERSION_LENGTH)
      throw invalid([
        {
          path: "version",
          message: parsed.ok
            ? `must be at most ${String(MAX_VERSION_LENGTH)} characters`
            : (parsed.problems[0]?.message ?? "must be a version"),
          value: version,
        },
      ]);
    const running = clusters
      .map((c) => kubernetesVersionOf(c.kubernetesVersion))
      .filter((v) => v !== undefined);
    if (
      running.length > 0 &&
      running.every((v) => compareKubernetesVersions(parsed.value, v) < 0)
    ) {
      const oldest = running.reduce((a, b) =>
        compareKubernetesVersions(a, b) <= 0 ? a : b,
      );
      throw invalid([
        {
          path: "version",
          message: `is older than what every cluster already runs (the oldest runs ${formatKubernetesVersion(oldest)}): Kubernetes does not downgrade`,
          value: version,
        },
      ]);
    }
    return {
      kind: "kubernetes",
      version: formatKubernetesVersion(parsed.value),
      ...(input.lts === true ? { lts: true as const } : {}),
      ...(input.preview === true ? { preview: true as const } : {}),
      addedAtMs: nowMs,
      addedBy: actor,
    };
  }
  if (input.kind !== "node-image")
    throw invalid([
      {
        path: "kind",
        message: 'must be "kubernetes" or "node-image"',
        value: input.kind,
      },
    ]);
  const family = input.family ?? "";
  const problems: Problem[] = [];
  if (!FAMILY.test(family) || family.length > MAX_VERSION_LENGTH)
    problems.push({
      path: "family",
      message: `must be an image family like "ubuntu-22.04" (letters, digits, "-", "_", "."; at most ${String(MAX_VERSION_LENGTH)} characters)`,
      value: family,
    });
  if (!NODE_IMAGE_VERSION.test(version) || version.length > MAX_VERSION_LENGTH)
    problems.push({
      path: "version",
      message: `must be a node-image version like "202603.01.0" (at most ${String(MAX_VERSION_LENGTH)} characters)`,
      value: version,
    });
  if (problems.length > 0) throw invalid(problems);
  if (input.lts === true || input.preview === true)
    throw invalid([
      {
        path: input.lts === true ? "lts" : "preview",
        message: "applies to Kubernetes releases only",
        value: true,
      },
    ]);
  const pools = clusters.flatMap((c) =>
    c.nodePools.filter((p) => p.imageFamily === family),
  );
  if (
    pools.length > 0 &&
    pools.every((p) => compareNodeImageVersions(version, p.imageVersion) < 0)
  )
    throw invalid([
      {
        path: "version",
        message: `is older than the image every node pool of family ${showValue(family)} already runs`,
        value: version,
      },
    ]);
  return {
    kind: "node-image",
    family,
    version,
    addedAtMs: nowMs,
    addedBy: actor,
  };
}

export interface Releases {
  start(): Promise<void>;
  /** Takes in releases written through other replicas until `signal` aborts. */
  follow(signal: AbortSignal): Promise<void>;
  list(): Release[];
  /** Publishes `release` (a release of the same version replaces it, e.g. preview → GA). */
  add(release: Release): Promise<void>;
  /** Removes a release; NOT_FOUND when there is none of that name. */
  remove(input: {
    kind: string;
    version: string;
    family?: string;
  }): Promise<Release>;
  /** Calls `listener` after each change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}

export function createReleases(deps: { readonly store: StateStore }): Releases {
  const releases = new Map<string, { release: Release; revision: number }>();
  const listeners = new Set<() => void>();
  const changed = (): void => {
    for (const listener of [...listeners]) listener();
  };
  const byId = (a: Release, b: Release): number =>
    releaseId(a) < releaseId(b) ? -1 : 1;
  return {
    async start() {
      releases.clear();
      for (const { value, revision } of await deps.store.list(RELEASES))
        releases.set(releaseId(value), { release: value, revision });
      changed();
    },
    follow(signal) {
      return followCollection(deps.store, RELEASES, signal, {
        put(id, release, revision) {
          if ((releases.get(id)?.revision ?? 0) >= revision) return;
          releases.set(id, { release, revision });
          changed();
        },
        delete(id) {
          if (releases.delete(id)) changed();
        },
        error: () => undefined,
      });
    },
    list() {
      return [...releases.values()].map((r) => r.release).sort(byId);
    },
    async add(release) {
      const id = releaseId(release);
      const revision = await deps.store.put(
        RELEASES,
        encodeKeyToken(id),
        release,
      );
      releases.set(id, { release, revision });
      changed();
    },
    async remove(input) {
      const id = releaseId(input);
      const found = releases.get(id);
      if (found === undefined)
        throw new FlotillaError(
          "not_found",
          `There is no release ${showValue(id)}`,
        );
      await deps.store.delete(RELEASES, encodeKeyToken(id));
      releases.delete(id);
      changed();
      return found.release;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
