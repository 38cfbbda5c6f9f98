/**
 * The {@link KubeGateway} for real clusters, on @kubernetes/client-node: server-side apply with the
 * field manager `flotilla-agent`, an inventory ConfigMap per bundle (inventory.ts) for prune,
 * removal and `listBundles`, the checks of bundle-plan.ts before anything is sent, the apply steps
 * of bundle-apply.ts, and readiness and drift followed by watches (bundle-tracker.ts). A bundle
 * asked to `correctDrift` has its Modified or Missing objects restored (drift-correction.ts,
 * docs/agent.md#drift-correction); `setCorrectDrift` changes that without applying again.
 *
 * Conflicts: applies use `force` from the request (a redeploy), else from the options (default
 * false), so a field another manager
 * owns with a different value fails the revision with the API server's conflict message.
 */
import { compact, FlotillaError } from "@flotilla/core";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { Clock } from "@flotilla/node";
import { applyPlanned, ApplyRefused, deleteOwned } from "./bundle-apply.js";
import { bundleStatus, createBundleObserver } from "./bundle-observer.js";
import { planBundle } from "./bundle-plan.js";
import { trackBundle, type BundleTracker } from "./bundle-tracker.js";
import type {
  BundleStatus,
  DriftCorrectionMode,
  KubeGateway,
} from "./gateway.js";
import {
  deleteInventory,
  listInventories,
  readInventory,
} from "./inventory.js";
import { createKubeClient, KubeCallError } from "./kube-client.js";
import { deleteOrder } from "./apply-order.js";
import { createStatusListeners } from "./status-listeners.js";
import { mergeIntoPlanned, namespaceManager } from "./namespace-metadata.js";

/** Dependencies of {@link createClientNodeGateway}. */
export interface ClientNodeGatewayDeps {
  readonly kubeConfig: KubeConfig;
  /** Default `flotilla-agent`. */
  readonly fieldManager?: string;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Jitter of the drift-correction back-off; default Math.random. */
  readonly random?: () => number;
  /** Called after every drift correction of one object (the agent counts them). */
  readonly onDriftCorrection?: (bundle: string, result: "ok" | "error") => void;
}

/** Options of {@link createClientNodeGateway}. */
export interface ClientNodeGatewayOptions {
  /** The agent's namespace: where the inventories live. */
  readonly namespace: string;
  /** Take over fields other managers own instead of failing with a conflict; default false. */
  readonly force?: boolean;
  /** How long a CRD may take to become Established; default 60000 ms. */
  readonly crdTimeoutMs?: number;
  /** Pause between checks of a CRD's Established condition; default 500 ms. */
  readonly pollIntervalMs?: number;
  /** Pause before restarting a watch that ended; default 1000 ms. */
  readonly watchRetryMs?: number;
  /** Largest manifest accepted (JSON bytes); default 1048576, Kubernetes' object data limit. */
  readonly maxManifestBytes?: number;
  /** Back-off between corrections of one object: first pause, cap; default 1000 and 300000 ms. */
  readonly driftBackoff?: {
    readonly initialMs?: number;
    readonly maxMs?: number;
  };
}

/** The gateway plus its lifecycle. */
export interface ClientNodeGateway extends KubeGateway, AsyncDisposable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface Held {
  status: BundleStatus;
  tracker?: BundleTracker;
  applying?: AbortController;
  correctDrift?: DriftCorrectionMode | undefined;
  /** Looks at the tracked objects again (after a change of `correctDrift`). */
  observe?: () => void;
}

function reasonOf(error: unknown): string {
  if (error instanceof ApplyRefused) return error.message;
  if (error instanceof KubeCallError)
    return `${error.reason}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** Creates the gateway; call `start()` before use. */
export function createClientNodeGateway(
  deps: ClientNodeGatewayDeps,
  options: ClientNodeGatewayOptions,
): ClientNodeGateway {
  const { clock } = deps;
  const logger = deps.logger.child({ component: "kube-gateway" });
  const fieldManager = deps.fieldManager ?? "flotilla-agent";
  const client = createKubeClient(deps.kubeConfig, fieldManager);
  const held = new Map<string, Held>();
  const listeners = createStatusListeners();
  const lifetime = new AbortController();
  let state: "new" | "running" | "stopped" = "new";
  const ns = options.namespace;

  const assertRunning = (): void => {
    if (state === "new")
      throw new FlotillaError(
        "failed_precondition",
        "Cannot use the Kubernetes gateway: it is not started",
      );
    if (state === "stopped")
      throw new FlotillaError(
        "unavailable",
        "Cannot use the Kubernetes gateway: it is stopped",
      );
  };

  const publish = (h: Held, status: BundleStatus): BundleStatus => {
    h.status = status;
    listeners.emit(status);
    return status;
  };

  const statusOf = (
    bundle: string,
    revision: string,
    ...rest: Parameters<typeof bundleStatus> extends [unknown, ...infer R]
      ? R
      : never
  ): BundleStatus =>
    bundleStatus({ bundle, revision, nowMs: clock.now() }, ...rest);

  const gateway: ClientNodeGateway = {
    start() {
      if (state === "new") state = "running";
      return Promise.resolve();
    },
    stop() {
      state = "stopped";
      lifetime.abort(
        new FlotillaError(
          "unavailable",
          "Cannot use the Kubernetes gateway: it is stopped",
        ),
      );
      for (const h of held.values()) h.tracker?.stop();
      listeners.clear();
      return Promise.resolve();
    },
    [Symbol.asyncDispose]: () => gateway.stop(),

    async applyBundle(req, callOptions = {}) {
      assertRunning();
      callOptions.signal?.throwIfAborted();
      const what = `Cannot apply bundle "${req.bundle}" revision "${req.revision}"`;
      const existing = held.get(req.bundle);
      const h: Held = existing ?? {
        status: statusOf(req.bundle, req.revision, "Applying", [], 0),
      };
      held.set(req.bundle, h);
      // Set now: a setCorrectDrift while this apply runs must not be undone when it ends.
      h.correctDrift = req.correctDrift;
      h.applying?.abort(`superseded by revision "${req.revision}"`);
      const applying = new AbortController();
      h.applying = applying;
      const signal = AbortSignal.any([
        applying.signal,
        lifetime.signal,
        ...(callOptions.signal ? [callOptions.signal] : []),
      ]);
      const previous = h.status;
      const fail = (error: string): BundleStatus => {
        if (h.applying === applying) h.applying = undefined;
        // The failed revision's status stands: the previous one's readiness must not replace it.
        h.tracker?.stop();
        h.tracker = undefined;
        return publish(
          h,
          statusOf(
            req.bundle,
            req.revision,
            "Failed",
            [],
            req.manifests.length,
            { error: `${what}: ${error}` },
          ),
        );
      };
      publish(
        h,
        statusOf(
          req.bundle,
          req.revision,
          "Applying",
          [],
          req.manifests.length,
        ),
      );
      try {
        const planned = await planBundle(client, req, {
          maxManifestBytes: options.maxManifestBytes ?? 1_048_576,
          signal,
        });
        if (typeof planned === "string") return fail(planned);
        const deployNs = {
          name: req.targetNamespace ?? req.namespace ?? "default",
          labels: req.namespaceLabels ?? {},
          annotations: req.namespaceAnnotations ?? {},
        };
        const withMetadata = mergeIntoPlanned(planned, deployNs);
        const inventory = await readInventory(client, ns, req.bundle, signal);
        const applied = await applyPlanned(
          {
            client,
            clock,
            logger,
            namespace: ns,
            bundle: req.bundle,
            revision: req.revision,
            previous: inventory,
            force: req.force ?? options.force ?? false,
            crdTimeoutMs: options.crdTimeoutMs ?? 60_000,
            pollIntervalMs: options.pollIntervalMs ?? 500,
            signal,
            ...(withMetadata.merged
              ? {}
              : {
                  namespaceMetadata: {
                    ns: deployNs,
                    manager: namespaceManager(fieldManager, req.bundle),
                  },
                }),
          },
          withMetadata.planned,
        );
        signal.throwIfAborted();
        h.applying = undefined;
        h.tracker?.stop();
        const result = publish(
          h,
          statusOf(req.bundle, req.revision, "Applied", [], applied.length, {
            message: `Applied ${String(applied.length)} objects`,
          }),
        );
        let observe = (): void => undefined;
        const tracker = trackBundle(
          { client, clock, logger },
          req.bundle,
          applied,
          {
            retryMs: options.watchRetryMs ?? 1_000,
            onChange: () => {
              observe();
            },
          },
        );
        h.tracker = tracker;
        observe = createBundleObserver(
          {
            client,
            logger,
            clock,
            signal: lifetime.signal,
            backoff: compact({
              ...options.driftBackoff,
              random: deps.random,
            }),
            ...compact({ onCorrection: deps.onDriftCorrection }),
          },
          {
            bundle: req.bundle,
            revision: req.revision,
            correctDrift: () => h.correctDrift,
            objects: applied,
            tracker,
            current: () => h.status,
            publish: (status) => {
              publish(h, status);
            },
            active: () =>
              h.tracker === tracker &&
              h.applying === undefined &&
              held.get(req.bundle) === h,
          },
        );
        h.observe = observe;
        observe();
        return result;
      } catch (error) {
        if (!signal.aborted) return fail(reasonOf(error));
        if (h.applying === applying) {
          h.applying = undefined;
          if (existing === undefined) held.delete(req.bundle);
          else publish(h, previous);
        }
        if (applying.signal.aborted && signal.reason === applying.signal.reason)
          throw new FlotillaError(
            "failed_precondition",
            `${what}: ${String(applying.signal.reason)}`,
          );
        throw signal.reason ?? error;
      }
    },

    async removeBundle(bundle, callOptions = {}) {
      assertRunning();
      const signal = AbortSignal.any([
        lifetime.signal,
        ...(callOptions.signal ? [callOptions.signal] : []),
      ]);
      const h = held.get(bundle);
      h?.applying?.abort("the bundle was removed");
      h?.tracker?.stop();
      held.delete(bundle);
      const inventory = await readInventory(client, ns, bundle, signal);
      if (inventory === undefined) return;
      for (const ref of deleteOrder(inventory.refs))
        await deleteOwned({ client, logger, bundle, signal }, ref);
      await deleteInventory(client, ns, bundle, signal);
    },

    async listBundles(callOptions = {}) {
      assertRunning();
      const found = await listInventories(
        client,
        ns,
        (name, problem) => {
          logger.warn(
            { inventory: name, problem },
            "Ignoring an unreadable inventory",
          );
        },
        callOptions.signal,
      );
      return found.map(({ bundle, revision }) => ({ bundle, revision }));
    },

    setCorrectDrift(bundle, mode) {
      const h = held.get(bundle);
      if (h === undefined) return;
      h.correctDrift = mode;
      h.observe?.();
    },

    status: (bundle) => held.get(bundle)?.status,

    watch: (listener, callOptions) =>
      listeners.watch(
        listener,
        [...held.values()].map((h) => h.status),
        callOptions,
      ),
  };
  return gateway;
}
