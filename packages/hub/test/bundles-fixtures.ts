// Shared set-up for the bundle tests: a plain-object fleet, the memory store and publisher, a
// bundle manager with a hand-driven interval, and builders for specs and agent reports.
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { contentKeysOfSecret } from "../src/security/content-keys.js";

import {
  compact,
  FlotillaError,
  type Cluster,
  type ClusterGroup,
  type Labels,
} from "@flotilla/core";
import type { StatusPhase, StatusReport, wire } from "@flotilla/protocol";
import { pino } from "pino";
import type { ClusterDirectory } from "../src/clusters/cluster-directory.js";
import {
  createIntentWriter,
  type IntentWriter,
} from "../src/intents/intent-writer.js";
import {
  createMemoryIntentPublisher,
  type MemoryIntentPublisher,
} from "../src/intents/memory-intent-publisher.js";
import { createMemoryStore } from "../src/store/memory-store.js";
import type { HelmSupport } from "../src/bundles/helm-chart.js";
import type { KustomizeSupport } from "../src/bundles/kustomize.js";
import type { StateStore } from "../src/store/state-store.js";
import {
  createBundleManager,
  type BundleManager,
  type BundleManagerDeps,
} from "../src/bundles/bundle-manager.js";
import { objectReaderOf } from "../src/bundles/object-reader.js";

/** Content keys of the harnesses (the memory publisher stores content in clear). */
export const contentKeys = contentKeysOfSecret(randomBytes(32));

/** A fleet the test edits directly: clusters, groups and unreachable agents. */
export class TestFleet implements ClusterDirectory {
  members: Cluster[] = [];
  clusterGroups: ClusterGroup[] = [];
  readonly unreachable = new Set<string>();

  clusters(): readonly Cluster[] {
    return [...this.members].sort((a, b) => (a.name < b.name ? -1 : 1));
  }
  cluster(name: string): Cluster | undefined {
    return this.members.find((c) => c.name === name);
  }
  groups(): readonly ClusterGroup[] {
    return this.clusterGroups;
  }
  isUnreachable(name: string): boolean {
    return this.unreachable.has(name);
  }
  relabel(name: string, labels: Labels): void {
    this.members = this.members.map((c) =>
      c.name === name ? { ...c, labels } : c,
    );
  }
}

/** A cluster with a name and labels. */
export function cluster(name: string, labels: Labels = {}): Cluster {
  return { name, labels, groups: [], nodePools: [] };
}

/** `n` clusters c-00, c-01, … with `labels`. */
export function clusters(
  n: number,
  labels: (i: number) => Labels = () => ({}),
): Cluster[] {
  return Array.from({ length: n }, (_, i) =>
    cluster(`c-${String(i).padStart(2, "0")}`, labels(i)),
  );
}

/** A ConfigMap manifest (JSON) whose data carries `version`. */
export function configMap(version: string, name = "app"): string {
  return JSON.stringify(
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name },
      data: { version },
    },
    null,
    2,
  );
}

/** An ApplyBundle spec as the wire delivers it, with one inline manifest. */
export function bundleSpec(
  overrides: Partial<wire.BundleSpec__Output> & {
    readonly targets?: unknown;
    readonly customizations?: unknown;
    readonly strategy?: unknown;
    readonly version?: string;
  } = {},
): wire.BundleSpec__Output {
  const { targets, customizations, strategy, version, ...rest } = overrides;
  return {
    name: "web",
    namespace: "",
    defaultNamespace: "web",
    targetNamespace: "",
    manifests: [
      {
        path: "app.json",
        yaml: Buffer.from(configMap(version ?? "1")),
        content: "yaml",
      },
    ],
    files: [],
    helmJson: "",
    kustomizeJson: "",
    correctDriftJson: "",
    namespaceLabelsJson: "",
    namespaceAnnotationsJson: "",
    targetsJson: JSON.stringify(targets ?? [{ clusterSelector: {} }]),
    targetCustomizationsJson:
      customizations === undefined ? "" : JSON.stringify(customizations),
    ...(strategy === undefined
      ? {}
      : {
          rolloutStrategyJson: JSON.stringify(strategy),
          rollout: "rolloutStrategyJson",
        }),
    paused: false,
    labels: {},
    dependsOnJson: "",
    ...rest,
  };
}

/** Everything a bundle manager runs on, in memory. */
export interface Harness extends AsyncDisposable {
  readonly fleet: TestFleet;
  readonly store: StateStore;
  readonly publisher: MemoryIntentPublisher;
  readonly intents: IntentWriter;
  readonly manager: BundleManager;
  /** The manager's clock (ms). */
  nowMs: number;
  /** Fires the pass interval by hand. */
  readonly fireInterval: () => void;
  /** A second manager on the same store and publisher (a restarted hub). */
  restart(): Promise<BundleManager>;
}

export async function startHarness(
  members: Cluster[] = [],
  options: {
    readonly helm?: HelmSupport;
    readonly kustomize?: KustomizeSupport;
    /** More of the manager's deps (staged runs, say). */
    readonly deps?: Partial<BundleManagerDeps>;
    /** Earlier revisions each record keeps (the manager's default when absent). */
    readonly revisionHistory?: number;
  } = {},
): Promise<Harness> {
  const fleet = new TestFleet();
  fleet.members = members;
  const store = createMemoryStore();
  await store.start();
  const publisher = createMemoryIntentPublisher();
  await publisher.start();
  const intents = createIntentWriter(publisher);
  const ticks: (() => void)[] = [];
  const managers: BundleManager[] = [];
  const harness = {
    fleet,
    store,
    publisher,
    intents,
    nowMs: Date.UTC(2026, 2, 2, 10),
    fireInterval: () => {
      for (const tick of ticks) tick();
    },
  } as Omit<Harness, "manager" | "restart" | typeof Symbol.asyncDispose>;
  const open = async (
    writer = createIntentWriter(publisher),
  ): Promise<BundleManager> => {
    const manager = createBundleManager(
      {
        store,
        intents: writer,
        publisher,
        objects: objectReaderOf((d) => publisher.bundleContent(d)),
        contentKeys,
        directory: fleet,
        now: () => (harness as Harness).nowMs,
        log: pino({ level: "silent" }),
        ...compact({ helm: options.helm, kustomize: options.kustomize }),
        every: (_ms, tick) => {
          ticks.push(tick);
          return () => ticks.splice(ticks.indexOf(tick), 1);
        },
        ...options.deps,
      },
      {
        passIntervalMs: 5_000,
        ...compact({ revisionHistory: options.revisionHistory }),
      },
    );
    await manager.start();
    managers.push(manager);
    return manager;
  };
  const manager = await open(intents);
  return Object.assign(harness, {
    manager,
    restart: () => open(),
    async [Symbol.asyncDispose]() {
      for (const m of managers) await m.stop();
      await publisher.stop();
      await store.stop();
    },
  });
}

/** The revision of `bundle` in each cluster's stored intent (undefined: not released). */
export function releasedRevisions(
  h: Harness,
  bundle = "web",
): Map<string, string | undefined> {
  const snapshot = h.publisher.snapshot();
  return new Map(
    h.fleet
      .clusters()
      .map((c) => [
        c.name,
        snapshot.get(c.name)?.intent.bundles[bundle]?.revision,
      ]),
  );
}

/** Names of clusters whose intent holds `revision` of `bundle`. */
export function holding(
  h: Harness,
  revision: string,
  bundle = "web",
): string[] {
  return [...releasedRevisions(h, bundle)]
    .filter(([, r]) => r === revision)
    .map(([c]) => c);
}

let sequence = 0;

/** A counted report from `cluster` on `revision` of `bundle`, at its current intent generation. */
export function report(
  h: Harness,
  clusterName: string,
  revision: string,
  phase: StatusPhase,
  extra: Partial<StatusReport> = {},
  bundle = "web",
): StatusReport {
  const generation =
    h.publisher.snapshot().get(clusterName)?.intent.generation ?? 1;
  sequence++;
  return {
    sequence,
    generation,
    subject: { kind: "bundle", bundle, revision },
    phase,
    reasons: [],
    reasonsTruncated: 0,
    observedAtMs: h.nowMs,
    ...(phase === "Failed" ? { error: "apply failed" } : {}),
    ...extra,
  };
}

/** Every cluster in `names` reports Ready at `revision`; then the passes settle. */
export async function reportReady(
  h: Harness,
  names: readonly string[],
  revision: string,
  manager: BundleManager = h.manager,
): Promise<void> {
  for (const name of names)
    manager.onStatus(name, report(h, name, revision, "Ready"));
  await manager.idle();
}

/** Applies `spec` and waits for the passes; the revision. */
export async function applyAndSettle(
  h: Harness,
  spec = bundleSpec(),
): Promise<string> {
  const { bundle } = await h.manager.apply(spec, "test");
  await h.manager.idle();
  return bundle.record.revision;
}

/** The FlotillaError `promise` rejects with; fails when it resolves or rejects otherwise. */
export async function refusal(
  promise: Promise<unknown>,
): Promise<FlotillaError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof FlotillaError))
    throw new Error(`not refused: ${String(error)}`);
  return error;
}

/** Every file under `dir` but fleet.yaml and README.md, as the CLI sends them, in path order. */
export async function filesOf(dir: string): Promise<wire.Manifest__Output[]> {
  const out: wire.Manifest__Output[] = [];
  for (const entry of await readdir(dir, {
    recursive: true,
    withFileTypes: true,
  })) {
    if (!entry.isFile()) continue;
    const path = relative(dir, join(entry.parentPath, entry.name))
      .split("\\")
      .join("/");
    if (path === "fleet.yaml" || path === "README.md") continue;
    out.push({
      path,
      yaml: await readFile(join(dir, path)),
      content: "yaml",
    });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}
