/**
 * The small fleet the run manager's unit tests share: three prod clusters on 1.29.9, a run `up`
 * upgrading them to 1.30.3 one at a time, and a manager over a given store and intent writer.
 */
import {
  parseUpdateStrategy,
  type Cluster,
  type ClusterGroup,
} from "@flotilla/core";
import pino from "pino";
import type { ClusterDirectory } from "../src/clusters/cluster-directory.js";
import {
  createIntentWriter,
  type IntentWriter,
} from "../src/intents/intent-writer.js";
import { createMemoryIntentPublisher } from "../src/intents/memory-intent-publisher.js";
import { createRunManager, type RunManager } from "../src/runs/run-manager.js";
import type { StateStore } from "../src/store/state-store.js";

export const NOW = Date.parse("2026-12-01T10:00:00Z");
export const NAMES = ["prod-01", "prod-02", "prod-03"];

/** The three clusters; `unreachable` is read on every call. */
export function prodDirectory(
  unreachable: ReadonlySet<string> = new Set(),
): ClusterDirectory {
  const clusters: Cluster[] = NAMES.map((name) => ({
    name,
    labels: { env: "prod" },
    groups: [],
    kubernetesVersion: "1.29.9",
    nodePools: [],
  }));
  return {
    clusters: () => clusters,
    cluster: (name) => clusters.find((c) => c.name === name),
    groups: (): readonly ClusterGroup[] => [],
    isUnreachable: (name) => unreachable.has(name),
  };
}

/** A run manager at {@link NOW} over `store`; intents to a fresh memory publisher by default. */
export function prodManager(
  store: StateStore,
  options: { intents?: IntentWriter; directory?: ClusterDirectory } = {},
): RunManager {
  return createRunManager({
    store,
    intents:
      options.intents ?? createIntentWriter(createMemoryIntentPublisher()),
    directory: options.directory ?? prodDirectory(),
    now: () => NOW,
    logger: pino({ level: "silent" }),
  });
}

/**
 * Creates run `up` (one stage over the three, maxConcurrency 1, `maxAllowedFailures` when given),
 * calls `beforeStart`, starts it and waits until the manager is idle.
 */
export async function createAndStartUp(
  runs: RunManager,
  options: { maxAllowedFailures?: number; beforeStart?: () => void } = {},
): Promise<void> {
  const strategy = parseUpdateStrategy({
    stages: [
      {
        name: "prod",
        memberSelector: { byLabel: "env=prod" },
        maxConcurrency: 1,
        ...(options.maxAllowedFailures === undefined
          ? {}
          : { maxAllowedFailures: options.maxAllowedFailures }),
      },
    ],
  });
  if (!strategy.ok) throw new Error(JSON.stringify(strategy.problems));
  await runs.create({
    name: "up",
    strategy: strategy.value,
    payload: {
      kind: "upgrade",
      upgrade: {
        type: "Full",
        kubernetesVersion: "1.30.3",
        nodeImageSelection: "Latest",
      },
    },
  });
  options.beforeStart?.();
  await runs.command("up", { type: "StartRun", actor: "test", reason: "" });
  await runs.idle();
}
