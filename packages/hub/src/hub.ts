/**
 * The hub: every part wired together, independent of how the process was started (main.ts reads
 * the config and builds the adapters; tests pass in-memory or real adapters directly).
 *
 * Start order: the state (cluster groups, clusters, strategies, runs, bundles) is loaded and
 * every active run's intents are republished before the gRPC server accepts anyone, so the first
 * agent to reconnect after a crash already finds what the stored runs say.
 */
import type { FlotillaErrorCode, PlanOutput } from "@flotilla/core";
import {
  addAdminService,
  loadProtocol,
  SERVER_OPTIONS,
  type StatusReport,
  type wire,
} from "@flotilla/protocol";
import { ReflectionService } from "@grpc/reflection";
import { Server, type ServerCredentials } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { withAuditFallback } from "./audit/audit-fallback.js";
import type { AuditLog } from "./audit/audit-log.js";
import {
  createRefusalAudit,
  type RefusalAudit,
  type RefusalAuditSettings,
} from "./audit/refusal-audit.js";
import type { ClusterDirectory } from "./clusters/cluster-directory.js";
import {
  createClusterGroups,
  type ClusterGroups,
} from "./clusters/cluster-groups.js";
import {
  createClusterRegistry,
  type ClusterRegistry,
} from "./clusters/cluster-registry.js";
import type { BundleMethod } from "./bundles/admin-bundles.js";
import type { ClusterBundle } from "./bundles/bundle-views.js";
import { fleetHandlers } from "./grpc/admin-fleet.js";
import { createAdminStreams } from "./grpc/admin-streams.js";
import { securityHandlers } from "./grpc/admin-security.js";
import { hubStatusHandlers } from "./grpc/admin-hub-status.js";
import { takeoverRecord } from "./audit/takeover-audit.js";
import type { StreamHealth } from "./jetstream/stream-health.js";
import { HUB_VERSION } from "./version.js";
import {
  createAgentRegistration,
  DEFAULT_CLUSTER_CERT_TTL_MS,
} from "./grpc/agent-registration.js";
import { runHandlers } from "./grpc/admin-runs.js";
import { listenGrpc, type GrpcListener } from "./grpc/listener.js";
import {
  agentServiceDefinition,
  createAgentService,
  type AgentService,
} from "./grpc/agent-service.js";
import type { AuditDeps } from "./grpc/unary.js";
import { componentLogger } from "./logger.js";
import type { IntentPublisher } from "./intents/intent-publisher.js";
import {
  createIntentWriter,
  type IntentWriter,
  type PublishOutcome,
} from "./intents/intent-writer.js";
import { createRunManager, type RunManager } from "./runs/run-manager.js";
import {
  createHubCatalogue,
  type HubCatalogue,
} from "./catalogue/hub-catalogue.js";
import { createReleases, type Releases } from "./catalogue/releases.js";
import { catalogueHandlers } from "./grpc/admin-catalogue.js";
import type { LeaseBucket } from "./leases/lease-bucket.js";
import {
  createLeaseKeeper,
  type LeaseKeeper,
  type ReplicaIdentity,
  type ReplicaRecord,
} from "./leases/lease-keeper.js";
import type { RunForwarding } from "./leases/run-forwarding.js";
import type { Presence } from "./leases/presence.js";
import { BUNDLES_UNIT, fenceOf, runOfUnit, runUnit } from "./leases/units.js";
import type { Fence } from "./intents/intent-fences.js";
import type { Clock } from "@flotilla/node";
import type { AdminAuth, AdminAuthHooks } from "./security/admin-auth.js";
import type { AgentNatsCredentialsIssuer } from "./security/agent-nats-credentials.js";
import { createBootstrapTokens } from "./security/bootstrap-tokens.js";
import type { CertificateAuthority } from "./security/certificate-authority.js";
import {
  createClusterIdentities,
  type NatsUserRevoker,
} from "./security/cluster-identities.js";
import {
  createContentKeys,
  type ContentKeys,
} from "./security/content-keys.js";
import type { StateStore } from "./store/state-store.js";
import {
  createUpdateStrategies,
  type UpdateStrategies,
} from "./strategies/update-strategies.js";
import { compact } from "@flotilla/core";
// Auto-upgrade profiles (docs/engine.md#auto-upgrade-profiles).
import {
  createAutoUpgradeProfiles,
  type AutoUpgradeProfiles,
} from "./autoupgrade/auto-upgrade-profiles.js";
import {
  createAutoUpgradeTrigger,
  type AutoUpgradeTrigger,
} from "./autoupgrade/auto-upgrade-trigger.js";
import { autoUpgradeHandlers } from "./grpc/admin-auto-upgrade.js";
import { AUTO_UPGRADE_UNIT, GITREPOS_UNIT } from "./leases/units.js";
// Git repositories as a bundle source (docs/gitops.md).
import { gitRepoHandlers } from "./grpc/admin-gitrepos.js";
import type { GitRepoService } from "./gitrepos/gitrepo-service.js";
import type { RunBundles } from "./runs/run-bundles.js";
import type { RunMemberOf } from "./bundles/bundle-status.js";
import type {
  PendingDriver,
  StagedRunMaker,
} from "./bundles/bundle-manager.js";
import { createStagedBundleRuns } from "./runs/staged-bundle-runs.js";
import { createGateMeasurer } from "./runs/gate-measurements.js";
import { createGitClient, type GitClient } from "./gitrepos/git-client.js";
import type { PrometheusClient } from "./gates/prometheus-client.js";
import type { MetricSource } from "./runs/gate-measurements.js";
import {
  createGitRepoManager,
  type GitRepoBundles,
  type GitRepoManager,
} from "./gitrepos/gitrepo-manager.js";

type Handlers = wire.AdminServiceHandlers;

/**
 * What the hub needs from the bundle rollouts (packages/hub/src/bundles): staged runs of bundle
 * revisions included, and what GitRepos apply bundles with.
 */
export interface BundleService extends RunBundles, GitRepoBundles {
  start(): Promise<void>;
  stop(): Promise<void> | void;
  onStatus(cluster: string, report: StatusReport): void;
  onFleetChanged(): void;
  /** Takes in bundles applied or deleted through other replicas until `signal` aborts. */
  follow(signal: AbortSignal): Promise<void>;
  /** Resolves when no pass is running or waiting. */
  idle(): Promise<void>;
  /** A pass (releases, holds); called on the pass interval. */
  tick(): void;
  preview(name: string): PlanOutput;
  /** The revision of a staged bundle waiting for its run (docs/semantics.md#staged-bundles). */
  stagedDriver(name: string): PendingDriver | undefined;
  /** Every bundle that targets `cluster`, with its state there. */
  clusterBundles(cluster: string): Promise<readonly ClusterBundle[]>;
  readonly handlers: Pick<Handlers, BundleMethod>;
}

/** What the bundle service is built from. */
export interface BundleServiceDeps extends AuditDeps {
  readonly store: StateStore;
  readonly intents: IntentWriter;
  /** Loaded before the bundle service starts. */
  readonly contentKeys: ContentKeys;
  readonly publisher: IntentPublisher;
  readonly directory: ClusterDirectory;
  readonly logger: Logger;
  /** Whether this hub runs bundle passes now (the owner of the bundles lease). */
  readonly runsPasses: () => boolean;
  /** A cluster's place in a staged run, for the status of a bundle the run drives. */
  readonly runMember: RunMemberOf;
  /** Makes the runs of staged bundles' new revisions (docs/semantics.md#staged-bundles). */
  readonly stagedRuns: StagedRunMaker;
  /** Whether update run `run` exists. */
  readonly runExists: (run: string) => boolean;
  /**
   * Stops the run driving a bundle that is rolled back to `revision`
   * (docs/semantics.md#rolling-back-a-bundle).
   */
  readonly stopRolledBackRun: (
    run: string,
    revision: string,
    actor: { readonly actor: string; readonly reason: string },
  ) => Promise<void>;
  /**
   * The hub's Prometheus, for metric gates between partitions (docs/semantics.md#partition-gates);
   * absent: none configured.
   */
  readonly metrics?: MetricSource;
  /** This replica's id (audit records of measurements). */
  readonly replica: () => string;
}

/** Hooks for metrics; every one optional. */
export interface HubObserver {
  readonly onTransition?: (scope: string, to: string) => void;
  /** A Ready report started other members: seconds until their intents were published. */
  readonly onReportToIntent?: (seconds: number) => void;
  readonly onSessionRefused?: (code: string) => void;
  /** An agent's version catalogue was refused (the cluster keeps its previous one). */
  readonly onCatalogueRejected?: (reason: "implausible" | "malformed") => void;
  readonly onReport?: (phase: string, accepted: boolean) => void;
  readonly onUnreachable?: (count: number) => void;
  readonly onIntentPublish?: (
    outcome: PublishOutcome,
    durationMs: number,
  ) => void;
  /** Every AdminService call with a response (unary and client-streaming): method, gRPC code, time. */
  readonly onAdminCall?: (
    method: string,
    code: number,
    durationMs: number,
  ) => void;
  /** An AdminService call refused by authentication or roles (streaming calls too). */
  readonly onAdminDenied?: (method: string, code: FlotillaErrorCode) => void;
  /** A refused call counted but not recorded in the audit log (`method`: its full name). */
  readonly onRefusalSuppressed?: (method: string) => void;
  /** An audit record was not stored (it went to the hub's log instead), by the error's code. */
  readonly onAuditWriteFailed?: (code: FlotillaErrorCode) => void;
  /** A Register or RenewIdentity call answered: `ok` or its error's code. */
  readonly onRegistration?: (
    method: "Register" | "RenewIdentity",
    code: FlotillaErrorCode | "ok",
  ) => void;
}

/** Wraps the handlers that answer through a callback so that each answer is observed. */
function observeAdminCalls(
  handlers: Handlers,
  observe: HubObserver["onAdminCall"],
): Handlers {
  if (observe === undefined) return handlers;
  const wrapped: Record<string, unknown> = {};
  for (const [method, handler] of Object.entries(handlers) as [
    string,
    unknown,
  ][]) {
    if (typeof handler !== "function" || handler.length !== 2) {
      wrapped[method] = handler;
      continue;
    }
    const original = handler as (
      call: unknown,
      callback: (...args: unknown[]) => void,
    ) => void;
    wrapped[method] = (
      call: unknown,
      callback: (...args: unknown[]) => void,
    ) => {
      const started = performance.now();
      original(call, (...args: unknown[]) => {
        const error = args[0] as { code?: number } | null | undefined;
        observe(method, error?.code ?? 0, performance.now() - started);
        callback(...args);
      });
    };
  }
  return wrapped as unknown as Handlers;
}

/**
 * Several hub replicas sharing one NATS (docs/high-availability.md): each run, and the bundle
 * rollouts, are driven by the one replica holding their lease.
 */
export interface HubReplication {
  readonly bucket: LeaseBucket;
  readonly forwarding: RunForwarding;
  readonly presence: Presence;
  readonly identity: ReplicaIdentity;
  readonly clock: Clock;
  /**
   * A unit moved to this replica from `from`, the replica that held it last (undefined: it never
   * had an owner): metrics.
   */
  readonly onTakeover?: (unit: string, from: string | undefined) => void;
}

/** Agent identities under TLS; absent: plaintext development mode. */
export interface HubSecurity {
  readonly authority: CertificateAuthority;
  /** Absent: registration returns no NATS credentials. */
  readonly natsCredentials?: AgentNatsCredentialsIssuer;
  /** Revokes the NATS users of removed or re-registered clusters (agents-account.ts). */
  readonly natsUsers?: NatsUserRevoker;
  /** Lifetime of cluster certificates (default 30 days). */
  readonly clusterCertificateTtlMs?: number;
}

export interface HubOptions {
  readonly store: StateStore;
  readonly publisher: IntentPublisher;
  readonly audit: AuditLog;
  readonly logger: Logger;
  readonly now?: () => number;
  /**
   * The keys bundle content is sealed with (the publisher's, when it seals); default: from the
   * content secret in `store`. Loaded by `start()`.
   */
  readonly contentKeys?: ContentKeys;
  readonly heartbeatIntervalMs: number;
  readonly missedHeartbeats: number;
  /** How often runs tick, bundles pass and heartbeats are checked. */
  readonly passIntervalMs: number;
  readonly bundles: (deps: BundleServiceDeps) => BundleService;
  readonly auditHandlers: (
    log: AuditLog,
  ) => Pick<Handlers, "ListAuditEvents" | "WatchAuditEvents">;
  readonly observer?: HubObserver;
  /** Registration, agent mTLS and admin certificates; absent: plaintext, hello names the cluster. */
  readonly security?: HubSecurity;
  /**
   * Authentication and roles of AdminService calls (security/admin-auth.ts), built with the hub's
   * audit log; absent: callers are named by the `x-flotilla-actor` header and all are admin.
   */
  readonly adminAuth?: (
    deps: AuditDeps & { readonly refusals: RefusalAudit },
    hooks: AdminAuthHooks,
  ) => AdminAuth;
  /** How many refused calls per peer the audit log records one by one (default 100 a minute). */
  readonly refusalAudit?: RefusalAuditSettings;
  /** Several replicas; absent: this hub owns every run and the bundle rollouts. */
  readonly replication?: HubReplication;
  /** The health of the JetStream streams the hub uses (`flotilla hub status`); absent: none. */
  readonly streamHealth?: () => Promise<readonly StreamHealth[]>;
  /** Replaces the hub's GitRepo manager in the admin API (tests of the API alone). */
  readonly gitRepos?: GitRepoService;
  /** The git client of GitRepos (hub options `--git-*`); default `git` with default limits. */
  readonly git?: GitClient;
  /** GitRepos synced at once (`--git-sync-concurrency`, default 4). */
  readonly gitSyncConcurrency?: number;
  /** The Prometheus metric gates query (`--prometheus-url`); absent: none configured. */
  readonly prometheus?: PrometheusClient;
}

export interface Hub {
  readonly registry: ClusterRegistry;
  readonly groups: ClusterGroups;
  readonly strategies: UpdateStrategies;
  readonly runs: RunManager;
  /** What the fleet can upgrade to (docs/engine.md#the-version-catalogue). */
  readonly catalogue: HubCatalogue;
  readonly releases: Releases;
  readonly bundles: BundleService;
  readonly intents: IntentWriter;
  readonly profiles: AutoUpgradeProfiles;
  readonly autoUpgrade: AutoUpgradeTrigger;
  /** Git repositories as a bundle source (docs/gitops.md): the admin API's GitRepoService. */
  readonly gitRepos: GitRepoManager;
  /** The lease keeper when replicas share the work (docs/high-availability.md). */
  readonly leases: LeaseKeeper | undefined;
  /** The Prometheus metric gates query (docs/running.md#prometheus); undefined: none. */
  readonly prometheus: PrometheusClient | undefined;
  /** Loads state, republishes intents, then serves gRPC on `address`; resolves with the port. */
  start(address: string, credentials: ServerCredentials): Promise<number>;
  /** Stops accepting calls, ends agent streams, stops timers. Adapters are the caller's. */
  stop(): Promise<void>;
  /** One line per part for /healthz. */
  health(): { ok: boolean; checks: Record<string, string> };
}

export function createHub(options: HubOptions): Hub {
  const now = options.now ?? Date.now;
  const log = options.logger;
  const { store, publisher } = options;
  const onAuditWriteFailed = options.observer?.onAuditWriteFailed;
  const audit = withAuditFallback(options.audit, {
    log: componentLogger(log, "audit"),
    ...compact({ onWriteFailed: onAuditWriteFailed }),
  });
  const auditDeps: AuditDeps = {
    audit,
    now,
    // The fallback has logged the record and its error already.
    onAuditError: () => undefined,
  };
  const onRefusalSuppressed = options.observer?.onRefusalSuppressed;
  const refusals = createRefusalAudit(
    {
      ...auditDeps,
      ...compact({ onSuppressed: onRefusalSuppressed }),
    },
    options.refusalAudit,
  );
  const onAdminDenied = options.observer?.onAdminDenied;
  const adminAuth = options.adminAuth?.(
    { ...auditDeps, refusals },
    compact({ onDenied: onAdminDenied }),
  );
  const intents = createIntentWriter(
    publisher,
    options.observer?.onIntentPublish,
  );
  const groups = createClusterGroups({ store, now });
  const registry = createClusterRegistry({
    store,
    now,
    unreachableAfterMs: options.heartbeatIntervalMs * options.missedHeartbeats,
    // `tick` checks heartbeats on the pass interval.
    stalls: {
      checkIntervalMs: options.passIntervalMs,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
    },
    groups: () => groups.all(),
  });
  const strategies = createUpdateStrategies({ store, now });
  // The version catalogue (docs/engine.md#the-version-catalogue): update runs and auto-upgrade
  // profiles read what the fleet can move to from this one instance.
  const releases = createReleases({ store });
  const catalogue: HubCatalogue = createHubCatalogue({
    fleet: registry,
    releases,
  });
  const contentKeys = options.contentKeys ?? createContentKeys({ store, now });
  const { replication } = options;
  let keeper: LeaseKeeper | undefined;
  const { prometheus } = options;
  const runs: RunManager = createRunManager({
    store,
    intents,
    directory: registry,
    catalogue,
    // Metric gates ask the hub's Prometheus (docs/engine.md#metric-gates); none: such runs are refused.
    ...(prometheus === undefined
      ? {}
      : {
          measureGate: createGateMeasurer({
            source: prometheus,
            audit,
            now,
            log: log.child({ component: "metric-gates" }),
            replica: () => replication?.identity.id ?? served.address,
          }),
        }),
    // A catalogue without Kubernetes versions (Cluster API's) cannot tell which it may take.
    reportsCatalogue: (cluster) =>
      (registry.factsOf(cluster)?.catalogue?.kubernetes.length ?? 0) > 0,
    now,
    logger: log.child({ component: "runs" }),
    onTransition: (t) => options.observer?.onTransition?.(t.scope, t.to),
    onReportToIntent: (seconds) =>
      options.observer?.onReportToIntent?.(seconds),
    // Staged runs of bundle revisions (docs/semantics.md#staged-bundle-runs); `bundles` is made
    // below and called only once the hub runs.
    bundles: {
      runBasis: (name, revision) => bundles.runBasis(name, revision),
      drive: (name, run, revision, replacing, pendingOnly) =>
        bundles.drive(name, run, revision, replacing, pendingOnly),
      releaseForRun: (releases, fence) =>
        bundles.releaseForRun(releases, fence),
      observed: (name, cluster) => bundles.observed(name, cluster),
      letGo: (name, run, cause) => bundles.letGo(name, run, cause),
      drivers: () => bundles.drivers(),
    },
    ...(replication === undefined
      ? {}
      : {
          replication: {
            forwardCommand: (name, commands) =>
              replication.forwarding.forwardCommand(name, commands),
            forwardDelete: (name) => replication.forwarding.forwardDelete(name),
            forwardReport: (cluster, run, report) => {
              replication.forwarding.forwardReport(cluster, run, report);
            },
            // A new run gets its owner before the call that created it is answered.
            created: () => keeper?.round() ?? Promise.resolve(),
          },
        }),
  });
  // Auto-upgrade profiles and their trigger, run by the owner of AUTO_UPGRADE_UNIT.
  const profiles = createAutoUpgradeProfiles({ store, now });
  const autoUpgrade = createAutoUpgradeTrigger({
    profiles,
    runs,
    strategies,
    directory: registry,
    catalogue,
    store,
    audit,
    now,
    logger: log.child({ component: "auto-upgrade" }),
    replica: () => replication?.identity.id ?? served.address,
    owns: () =>
      started &&
      (keeper === undefined || keeper.held(AUTO_UPGRADE_UNIT) !== undefined),
  });
  profiles.onChange(() => {
    autoUpgrade.poke();
  });
  /** Whether this replica runs the bundle rollouts' passes now. */
  const ownsBundles = (): boolean =>
    keeper === undefined || keeper.held(BUNDLES_UNIT) !== undefined;
  /** The latest counted bundle reports of the agents connected here, by cluster and bundle. */
  const latestBundle = new Map<string, Map<string, StatusReport>>();
  /** A bundle report is taken by this replica's bundle service and shared with every other replica. */
  const bundleReport = (cluster: string, report: StatusReport): void => {
    bundles.onStatus(cluster, report);
    runs.bundleReport(cluster, report);
    replication?.forwarding.forwardBundleReport(cluster, report);
  };
  /** The latest counted upgrade report of each cluster whose agent is connected here (replays). */
  const latestUpgrade = new Map<
    string,
    { readonly run: string; readonly report: StatusReport }
  >();
  /** The fence of the bundle rollouts' intent writes while this replica owns them. */
  const bundlesFence = (): Fence | undefined => {
    const lease = keeper?.held(BUNDLES_UNIT);
    return lease === undefined ? undefined : fenceOf(BUNDLES_UNIT, lease.epoch);
  };
  // Staged bundles' runs (docs/semantics.md#staged-bundles), made by the hub on an apply.
  const stagedRuns = createStagedBundleRuns({
    runs,
    strategies,
    bundles: () => bundles,
    audit,
    now,
    log: log.child({ component: "staged-bundles" }),
    replica: () => replication?.identity.id ?? served.address,
  });
  const bundles = options.bundles({
    ...auditDeps,
    store,
    intents: {
      ...intents,
      change: (cluster, changes, options = {}) =>
        intents.change(cluster, changes, {
          fence: options.fence ?? bundlesFence(),
        }),
      remove: (cluster, options = {}) =>
        intents.remove(cluster, { fence: options.fence ?? bundlesFence() }),
    },
    contentKeys,
    publisher,
    directory: registry,
    logger: log.child({ component: "bundles" }),
    runsPasses: () => ownsBundles(),
    runMember: (run, cluster) => runs.memberOf(run, cluster),
    stagedRuns,
    runExists: (run) => runs.list().some((r) => r.run.name === run),
    stopRolledBackRun: (run, revision, actor) =>
      runs.rolledBack(run, revision, actor),
    // Metric gates between partitions ask the same Prometheus (docs/semantics.md#partition-gates).
    ...compact({ metrics: prometheus }),
    replica: () => replication?.identity.id ?? served.address,
  });
  // Git repositories, synced by the owner of GITREPOS_UNIT (docs/gitops.md).
  const gitRepos = createGitRepoManager(
    {
      store,
      bundles,
      git: options.git ?? createGitClient(),
      strategyExists: (name) =>
        strategies.list().some((s) => s.record.name === name),
      now,
      log: log.child({ component: "gitrepos" }),
      owns: () =>
        started &&
        (keeper === undefined || keeper.held(GITREPOS_UNIT) !== undefined),
    },
    compact({ concurrency: options.gitSyncConcurrency }),
  );
  const tokens = createBootstrapTokens({ store, now });
  const { security } = options;
  const identities = createClusterIdentities({
    store,
    now,
    ...compact({ natsUsers: security?.natsUsers }),
  });
  const registration = createAgentRegistration({
    ...auditDeps,
    refusals,
    logger: log.child({ component: "registration" }),
    security:
      security === undefined
        ? undefined
        : {
            authority: security.authority,
            tokens,
            identities,
            ...compact({ natsCredentials: security.natsCredentials }),
            clusterCertificateTtlMs:
              security.clusterCertificateTtlMs ?? DEFAULT_CLUSTER_CERT_TTL_MS,
          },
    onRegistered: (cluster, agentVersion) =>
      registry.enroll(cluster, agentVersion),
    ...compact({ onAnswered: options.observer?.onRegistration }),
  });
  const agents: AgentService = createAgentService({
    registration,
    registry,
    intents,
    sinks: {
      upgrade: (cluster, run, report) => {
        if (replication !== undefined)
          latestUpgrade.set(cluster, { run, report });
        runs.memberReport(cluster, run, report);
      },
      bundle: (cluster, report) => {
        if (replication !== undefined && report.subject.kind === "bundle") {
          const byBundle =
            latestBundle.get(cluster) ?? new Map<string, StatusReport>();
          byBundle.set(report.subject.bundle, report);
          latestBundle.set(cluster, byBundle);
        }
        bundleReport(cluster, report);
      },
    },
    now,
    heartbeatIntervalMs: options.heartbeatIntervalMs,
    logger: log.child({ component: "agents" }),
    ...compact({
      onSessionRefused: options.observer?.onSessionRefused,
      onReport: options.observer?.onReport,
    }),
    onCatalogueRefused: (cluster, reason, problems) => {
      options.observer?.onCatalogueRejected?.(reason);
      log.warn(
        { cluster, reason, problems: problems.slice(0, 5) },
        "refused the version catalogue of a cluster's agent; its previous catalogue stays",
      );
    },
  });

  let presenceSoon: NodeJS.Timeout | undefined;
  const publishPresence = (): void => {
    if (presenceSoon !== undefined) clearTimeout(presenceSoon);
    presenceSoon = undefined;
    replication?.presence.publish(registry.presence());
  };
  registry.onChange((change) => {
    // A session opened here: tell the other replicas soon rather than at the next pass.
    if (
      replication !== undefined &&
      presenceSoon === undefined &&
      (change.type === "joined" ||
        change.type === "reachable" ||
        change.type === "changed")
    ) {
      presenceSoon = setTimeout(publishPresence, 100);
    }
    runs.clusterChanged(change);
    if (
      change.type !== "windows" &&
      change.type !== "supportPlan" &&
      ownsBundles()
    )
      bundles.onFleetChanged();
  });
  groups.onChange(() => {
    if (ownsBundles()) bundles.onFleetChanged();
  });
  const following = new AbortController();
  if (replication !== undefined) {
    const { forwarding, identity } = replication;
    const runOf = runOfUnit;
    // The replica each unit was taken from, between the keeper's onTakeover and onAcquired.
    const takenFrom = new Map<string, string>();
    keeper = createLeaseKeeper({
      bucket: replication.bucket,
      clock: replication.clock,
      logger: log.child({ component: "leases" }),
      self: identity,
      units: () => [
        BUNDLES_UNIT,
        AUTO_UPGRADE_UNIT,
        GITREPOS_UNIT,
        ...runs.ownable().map(runUnit),
      ],
      sessions: () => registry.connectedCount(),
      async onAcquired(unit, lease) {
        if (unit === AUTO_UPGRADE_UNIT) {
          autoUpgrade.poke();
          return;
        }
        if (unit === GITREPOS_UNIT) {
          gitRepos.tick();
          return;
        }
        const name = runOf(unit);
        if (name === undefined) {
          forwarding.requestBundleReplay();
          bundles.onFleetChanged();
          return;
        }
        await runs.acquire(name, { epoch: lease.epoch, replica: identity.id });
        forwarding.serveRun(name);
        forwarding.requestReplay(name);
        const from = takenFrom.get(unit);
        takenFrom.delete(unit);
        // Not awaited: a slow audit stream does not hold up the new owner.
        if (from !== undefined && from !== identity.id) {
          void audit
            .append(
              takeoverRecord({
                atMs: now(),
                replica: identity.id,
                run: name,
                epoch: lease.epoch,
                from,
              }),
            )
            .catch(auditDeps.onAuditError);
        }
      },
      onLost(unit) {
        const name = runOf(unit);
        if (name === undefined) return;
        forwarding.unserveRun(name);
        runs.lose(name);
      },
      async onReleasing(unit) {
        if (unit === AUTO_UPGRADE_UNIT) {
          await autoUpgrade.idle();
          return;
        }
        if (unit === GITREPOS_UNIT) {
          await gitRepos.idle();
          return;
        }
        const name = runOf(unit);
        if (name === undefined) {
          await bundles.idle();
          return;
        }
        forwarding.unserveRun(name);
        await runs.release(name);
      },
      onTakeover(unit, from) {
        if (from === undefined) takenFrom.delete(unit);
        else takenFrom.set(unit, from);
        replication.onTakeover?.(unit, from);
      },
    });
  }

  const adminStreams = createAdminStreams();
  // A hub without replicas names itself by the address it serves on.
  let served = { address: "", startedAtMs: now() };
  const selfRecord = (): ReplicaRecord => ({
    ...(replication?.identity ?? {
      id: served.address,
      incarnation: "",
      version: HUB_VERSION,
      settings: {},
      ...served,
    }),
    eligible: keeper?.eligible ?? true,
    sessions: registry.connectedCount(),
    leases: keeper?.heldUnits() ?? [],
    seenAtMs: now(),
  });
  let server: Server | undefined;
  let listener: GrpcListener | undefined;
  let timer: NodeJS.Timeout | undefined;
  let started = false;
  let unwatchCatalogue: (() => void) | undefined;

  const handlers: Handlers = {
    ...fleetHandlers({
      ...auditDeps,
      registry,
      groups,
      intents,
      bundlesOn: (cluster) => bundles.clusterBundles(cluster),
      ...(security === undefined
        ? {}
        : { forgetIdentity: (cluster) => identities.forget(cluster) }),
    }),
    ...runHandlers({
      ...auditDeps,
      runs,
      strategies,
      directory: registry,
      previewBundle: (name) => bundles.preview(name),
      ownerOf: (name) => {
        const unit = runUnit(name);
        return keeper?.held(unit) !== undefined
          ? replication?.identity.id
          : keeper?.holders().get(unit)?.replica;
      },
    }),
    ...bundles.handlers,
    ...catalogueHandlers({
      ...auditDeps,
      releases,
      catalogue,
      directory: registry,
    }),
    ...options.auditHandlers(audit),
    ...securityHandlers({
      ...auditDeps,
      tokens,
      authority: security?.authority,
    }),
    ...autoUpgradeHandlers({
      ...auditDeps,
      runs,
      strategies,
      directory: registry,
      previewBundle: (name) => bundles.preview(name),
      profiles,
      trigger: autoUpgrade,
      catalogue,
    }),
    ...gitRepoHandlers({
      ...auditDeps,
      gitRepos: options.gitRepos ?? gitRepos,
    }),
    ...hubStatusHandlers({
      self: selfRecord,
      replicas: () => keeper?.replicas() ?? [],
      ...compact({ streams: options.streamHealth }),
    }),
  };

  const tick = (): void => {
    const gone = registry.checkHeartbeats();
    if (gone.length > 0) {
      options.observer?.onUnreachable?.(gone.length);
      log.info(
        { clusters: gone.slice(0, 20), count: gone.length },
        "agents unreachable",
      );
    }
    if (replication !== undefined) publishPresence();
    runs.tick();
    if (ownsBundles()) {
      bundles.tick();
      void stagedRuns.makePending();
    }
    autoUpgrade.retryIfDue();
    void refusals.flush();
    registry.flush().catch((error: unknown) => {
      log.debug({ err: error }, "cluster records not written yet");
    });
  };

  return {
    registry,
    groups,
    strategies,
    runs,
    catalogue,
    releases,
    bundles,
    intents,
    profiles,
    autoUpgrade,
    gitRepos,
    get leases() {
      return keeper;
    },
    prometheus: options.prometheus,

    async start(address, credentials) {
      await groups.start();
      await registry.start();
      catalogue.prime();
      await strategies.start();
      await releases.start();
      await contentKeys.load();
      // Bundles first: a restarted run republishes its releases of a bundle revision.
      await bundles.start();
      await runs.start();
      await gitRepos.start();
      await profiles.start();
      if (replication !== undefined && keeper !== undefined) {
        await replication.bucket.start();
        replication.forwarding.start({
          command: (name, commands) => runs.commandAsOwner(name, commands),
          delete: (name) => runs.deleteAsOwner(name),
          report: (cluster, run, report) => {
            runs.memberReport(cluster, run, report);
          },
          replay: (run) => {
            for (const [cluster, latest] of latestUpgrade) {
              if (latest.run === run)
                runs.memberReport(cluster, run, latest.report);
            }
          },
          bundleReport: (cluster, report) => {
            bundles.onStatus(cluster, report);
          },
          bundleReplay: () => {
            for (const [cluster, byBundle] of latestBundle) {
              for (const report of byBundle.values())
                bundleReport(cluster, report);
            }
          },
        });
        await bundles.follow(following.signal);
        replication.presence.start((replica, clusters) => {
          registry.remotePresence(replica, clusters);
        });
        await intents.follow(following.signal);
        await groups.follow(following.signal);
        await strategies.follow(following.signal);
        await releases.follow(following.signal);
        await registry.follow(following.signal);
        await runs.follow(following.signal);
        await profiles.follow(following.signal);
        // The first round takes every free unit this replica is preferred for (all of them when
        // it is alone) before it serves anyone.
        await keeper.start();
      }
      const grpcServer = new Server({ ...SERVER_OPTIONS });
      grpcServer.addService(agentServiceDefinition(), agents.handlers);
      addAdminService(
        grpcServer,
        adminStreams.wrap(
          observeAdminCalls(
            adminAuth?.wrap(handlers) ?? handlers,
            options.observer?.onAdminCall,
          ),
        ),
      );
      new ReflectionService(loadProtocol().packageDefinition).addToServer(
        grpcServer,
      );
      // Not bindAsync: its accept queue overflows when 10,000 agents reconnect (listener.ts).
      listener = await listenGrpc(grpcServer, address, credentials);
      const { port } = listener;
      served = {
        address: `${address.slice(0, address.lastIndexOf(":"))}:${String(port)}`,
        startedAtMs: now(),
      };
      server = grpcServer;
      timer = setInterval(tick, options.passIntervalMs);
      started = true;
      unwatchCatalogue = catalogue.onChange(() => {
        autoUpgrade.poke();
      });
      // Alone, this hub owns the trigger from now on; a replica is poked when it takes the lease.
      autoUpgrade.poke();
      log.info({ address, port }, "hub serving");
      return port;
    },

    async stop() {
      started = false;
      if (timer !== undefined) clearInterval(timer);
      unwatchCatalogue?.();
      await autoUpgrade.idle();
      // Leases are handed back first, so another replica takes over at once.
      await keeper?.stop();
      replication?.forwarding.stop();
      replication?.presence.stop();
      if (presenceSoon !== undefined) clearTimeout(presenceSoon);
      following.abort();
      runs.stop();
      await gitRepos.stop();
      await bundles.stop();
      agents.closeAll();
      adminStreams.endAll();
      listener?.close();
      listener = undefined;
      const current = server;
      server = undefined;
      if (current !== undefined) {
        await new Promise<void>((resolve) => {
          const force = setTimeout(() => {
            current.forceShutdown();
            resolve();
          }, 5_000);
          current.tryShutdown(() => {
            clearTimeout(force);
            resolve();
          });
        });
      }
      // No call comes in any more: write what windows still open counted, or it is lost.
      await refusals.flush({ all: true });
    },

    health() {
      return {
        ok: started,
        checks: {
          grpc: started ? "serving" : "stopped",
          agents: `${String(registry.connectedCount())} connected`,
          ...(keeper === undefined
            ? {}
            : {
                leases: `${String(keeper.heldUnits().length)} held${keeper.eligible ? "" : " (refusing leases: see the log)"}`,
              }),
        },
      };
    },
  };
}
