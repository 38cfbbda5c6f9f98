/**
 * The bundle rollouts as the hub wires them: a {@link BundleManager} plus its AdminService
 * handlers, built from the hub's parts. The hub calls `tick()` on its pass interval, `onStatus`
 * for counted bundle reports and `onFleetChanged` for cluster changes.
 */
import { compact } from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import type { ClusterDirectory } from "../clusters/cluster-directory.js";
import type { AuditDeps } from "../grpc/unary.js";
import type { IntentWriter } from "../intents/intent-writer.js";
import type { Logger } from "../logger.js";
import type { ContentKeys } from "../security/content-keys.js";
import type { StateStore } from "../store/state-store.js";
import { bundleHandlers, type BundleMethod } from "./admin-bundles.js";
import type { RunMemberOf } from "./bundle-status.js";
import {
  createBundleManager,
  type BundleContentStore,
  type BundleManager,
  type BundleManagerDeps,
  type BundleManagerOptions,
  type StagedRunMaker,
} from "./bundle-manager.js";
import type { ObjectReader } from "./object-reader.js";
import type { HelmSupport } from "./helm-chart.js";
import type { KustomizeSupport } from "./kustomize.js";
import type { MetricSource } from "../runs/gate-measurements.js";
import {
  createPartitionGates,
  type PartitionGatesDeps,
} from "./partition-gates.js";

/** What the bundle service is built from (the hub's BundleServiceDeps plus the object reader). */
export interface BundleServiceDeps extends AuditDeps {
  readonly store: StateStore;
  /** The hub's one IntentWriter: runs and bundles change the same intents through it. */
  readonly intents: IntentWriter;
  readonly publisher: BundleContentStore;
  readonly directory: ClusterDirectory;
  readonly logger: Logger;
  /** The key of each content, for the intents (security/content-keys.ts). */
  readonly contentKeys: Pick<ContentKeys, "keyOf">;
  /** Reads PutObject uploads back: createJetStreamObjectReader({ nc }, { prefix }) in main.ts. */
  readonly objects: ObjectReader;
  /** Whether this hub runs passes now (the owner of the bundles lease); default always. */
  readonly runsPasses?: () => boolean;
  /** A cluster's place in a staged run, for the status of a bundle the run drives. */
  readonly runMember?: RunMemberOf;
  /** Makes the runs of staged bundles (docs/semantics.md#staged-bundles); absent: refused. */
  readonly stagedRuns?: StagedRunMaker;
  /** Whether update run `run` exists. */
  readonly runExists?: (run: string) => boolean;
  /** Stops the run driving a bundle that is rolled back; absent: such a rollback is refused. */
  readonly stopRolledBackRun?: BundleManagerDeps["stopRolledBackRun"];
  /** helm (hub option `helm`) and the chart fetcher, for Helm bundles; absent: refused. */
  readonly helm?: HelmSupport;
  /** kubectl (hub option `kubectl`), for Kustomize bundles; absent: refused. */
  readonly kustomize?: KustomizeSupport;
  /**
   * The hub's Prometheus, for metric gates between partitions (docs/semantics.md#partition-gates);
   * absent: bundles with such gates are refused.
   */
  readonly metrics?: MetricSource;
  /** This replica's id, for the actor of measurement audit records; default "hub". */
  readonly replica?: () => string;
  /** Told when a partition gate fails (where a rollback on a failed gate hooks in). */
  readonly onGateFailed?: PartitionGatesDeps["onGateFailed"];
}

/** The manager and its handlers. */
export interface BundleService extends BundleManager {
  readonly handlers: Pick<wire.AdminServiceHandlers, BundleMethod>;
}

/** Builds the bundle service; without `options.passIntervalMs` the owner drives `tick()`. */
export function createBundleService(
  deps: BundleServiceDeps,
  options: BundleManagerOptions = {},
): BundleService {
  const partitionGates = createPartitionGates({
    store: deps.store,
    audit: deps.audit,
    now: deps.now,
    log: deps.logger.child({ component: "partition-gates" }),
    replica: deps.replica ?? (() => "hub"),
    ...compact({ source: deps.metrics, onGateFailed: deps.onGateFailed }),
  });
  const manager = createBundleManager(
    {
      partitionGates,
      store: deps.store,
      intents: deps.intents,
      publisher: deps.publisher,
      objects: deps.objects,
      contentKeys: deps.contentKeys,
      directory: deps.directory,
      now: deps.now,
      log: deps.logger,
      ...compact({
        runsPasses: deps.runsPasses,
        runMember: deps.runMember,
        stagedRuns: deps.stagedRuns,
        runExists: deps.runExists,
        stopRolledBackRun: deps.stopRolledBackRun,
        helm: deps.helm,
        kustomize: deps.kustomize,
      }),
    },
    options,
  );
  return {
    ...manager,
    handlers: bundleHandlers({
      bundles: manager,
      audit: deps.audit,
      now: deps.now,
      onAuditError: deps.onAuditError,
    }),
  };
}
