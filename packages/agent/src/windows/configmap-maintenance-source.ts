/**
 * The Kubernetes {@link MaintenanceSource}: the owner's windows and freezes in a ConfigMap of the
 * agent's namespace, key `windows.yaml` (see windows-document.ts). `start()` reads it and then
 * watches it (a Kubernetes watch on that one name, `fieldSelector=metadata.name=…`), so an edit
 * reaches the agent, and from there the hub, at once. When a watch ends it is re-established after
 * a jittered exponential backoff, with a fresh read first so nothing that changed in the gap is
 * missed.
 *
 * Like every maintenance source: content that is not valid YAML or fails core's schema keeps the last valid
 * configuration in force, sets `error` (every problem with its field path) and logs it. A read
 * that fails (Forbidden, unreachable) does the same. A ConfigMap that does not exist means the
 * owner set no windows: any time. Tested against the local API server in @flotilla/testkit.
 */
import {
  canonicalJson,
  formatProblem,
  type Problem,
  compact,
} from "@flotilla/core";
import { Watch, type KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { createKubeClient, type KubeObject } from "../kube/kube-client.js";
import {
  backoffCeilingMs,
  halfJitter,
  systemClock,
  unlessAborted,
  type Clock,
} from "@flotilla/node";
import type {
  MaintenanceSource,
  MaintenanceState,
  WindowsChanged,
} from "../upgrade/maintenance-source.js";
import { parseWindowsDocument, WINDOWS_KEY } from "./windows-document.js";

/** Dependencies of {@link createConfigMapMaintenanceSource}. */
export interface ConfigMapMaintenanceSourceDeps {
  readonly kubeConfig: KubeConfig;
  readonly logger: Logger;
  /** For the re-watch backoff; default the system clock. */
  readonly clock?: Clock;
  /** [0, 1) for backoff jitter; default Math.random. */
  readonly random?: () => number;
}

/** Options of {@link createConfigMapMaintenanceSource}. */
export interface ConfigMapMaintenanceSourceOptions {
  readonly namespace: string;
  /** The ConfigMap's name, e.g. `flotilla-agent-windows` (the Helm chart's default). */
  readonly name: string;
  /** First re-watch delay, doubled per failure up to 30 s; default 1 s. */
  readonly retryMs?: number;
}

/** A maintenance source that owns a watch: start it, stop it. */
export interface ConfigMapMaintenanceSource
  extends MaintenanceSource, AsyncDisposable {
  /** Reads the ConfigMap and starts watching it. */
  start(options?: { readonly signal?: AbortSignal }): Promise<void>;
  stop(): Promise<void>;
}

const MAX_RETRY_MS = 30_000;

/** Creates the source; nothing is in force until `start()` or `reload()`. */
export function createConfigMapMaintenanceSource(
  deps: ConfigMapMaintenanceSourceDeps,
  options: ConfigMapMaintenanceSourceOptions,
): ConfigMapMaintenanceSource {
  const { namespace, name } = options;
  const clock = deps.clock ?? systemClock;
  const random = deps.random ?? Math.random;
  const log = deps.logger.child({ component: "maintenance-configmap" });
  const client = createKubeClient(deps.kubeConfig, "flotilla-agent");
  const source = `ConfigMap "${namespace}/${name}" key "${WINDOWS_KEY}"`;
  const listeners = new Set<(event: WindowsChanged) => void>();
  const lifetime = new AbortController();
  let state: MaintenanceState = {};
  let endWatch: (() => void) | undefined;
  let loop: Promise<void> | undefined;

  const publish = (next: MaintenanceState): void => {
    if (canonicalJson(next) === canonicalJson(state)) return;
    state = next;
    if (next.error === undefined)
      log.info(
        { configMap: `${namespace}/${name}` },
        "Maintenance windows loaded",
      );
    else
      log.warn(
        { configMap: `${namespace}/${name}`, problems: next.error.problems },
        next.error.message,
      );
    const event: WindowsChanged = { type: "WindowsChanged", state };
    for (const listener of [...listeners]) listener(event);
  };

  const refuse = (why: string, problems: readonly Problem[]): void => {
    const kept =
      state.maintenance === undefined
        ? "no windows are in force"
        : "the last valid configuration stays in force";
    publish({
      ...compact({ maintenance: state.maintenance }),
      error: {
        source,
        message: `Cannot load maintenance windows from ${source}: ${why}; ${kept}`,
        problems,
      },
    });
  };

  /** Takes the ConfigMap's content (undefined: it does not exist). */
  const take = (configMap: KubeObject | undefined): void => {
    if (configMap === undefined) {
      publish({});
      return;
    }
    const data = configMap.data as Record<string, unknown> | undefined;
    const text = data?.[WINDOWS_KEY];
    if (typeof text !== "string") {
      const keys = Object.keys(data ?? {});
      refuse(
        `it has no key "${WINDOWS_KEY}" (keys: ${keys.length === 0 ? "none" : keys.join(", ")})`,
        [{ path: `data.${WINDOWS_KEY}`, message: "is required" }],
      );
      return;
    }
    const parsed = parseWindowsDocument(text);
    if (!parsed.ok)
      refuse(parsed.problems.map(formatProblem).join("; "), parsed.problems);
    else publish(compact({ maintenance: parsed.value }));
  };

  const reload: MaintenanceSource["reload"] = async (reloadOptions = {}) => {
    const { signal } = reloadOptions;
    let configMap: KubeObject | undefined;
    try {
      configMap = await client.get(
        { apiVersion: "v1", kind: "ConfigMap", namespace, name },
        signal ? { signal } : {},
      );
    } catch (error) {
      signal?.throwIfAborted();
      refuse(
        `cannot read it: ${error instanceof Error ? error.message : String(error)}`,
        [],
      );
      return state;
    }
    take(configMap);
    return state;
  };

  /** One watch; resolves when it ends. */
  const watchOnce = async (): Promise<unknown> => {
    let finish: (error: unknown) => void = () => undefined;
    const ended = new Promise<unknown>((resolve) => (finish = resolve));
    const opening = new Watch(deps.kubeConfig).watch(
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`,
      { fieldSelector: `metadata.name=${name}` },
      (type: string, object: unknown) => {
        if (type === "ADDED" || type === "MODIFIED") take(object as KubeObject);
        else if (type === "DELETED") take(undefined);
      },
      (error: unknown) => {
        finish(error);
      },
    );
    // Opening resolves when the server sends the response headers; stop() must not wait for a
    // server (or a proxy) that holds them back.
    const controller = await unlessAborted(opening, lifetime.signal);
    if (controller === undefined) {
      opening.then(
        (late) => {
          late.abort();
        },
        () => undefined,
      );
      return undefined;
    }
    endWatch = () => {
      controller.abort();
      finish(undefined);
    };
    // stop() may have run while the watch was being opened.
    if (lifetime.signal.aborted) endWatch();
    return ended;
  };

  const watchLoop = async (): Promise<void> => {
    let failures = 0;
    const { signal } = lifetime;
    while (!signal.aborted) {
      let error: unknown;
      try {
        error = await watchOnce();
      } catch (caught) {
        error = caught;
      }
      if (signal.aborted) return;
      failures = error === null || error === undefined ? 0 : failures + 1;
      const retryMs = options.retryMs ?? 1_000;
      const delayMs = backoffCeilingMs(
        Math.min(failures, 10),
        retryMs,
        MAX_RETRY_MS,
      );
      log.debug({ err: error, delayMs }, "Maintenance ConfigMap watch ended");
      try {
        await clock.sleep(halfJitter(delayMs, random), { signal });
        await reload({ signal });
      } catch {
        return; // stopping
      }
    }
  };

  const stop = async (): Promise<void> => {
    lifetime.abort();
    endWatch?.();
    await loop;
  };

  return {
    current: () => state,
    reload,
    watch(listener, watchOptions = {}) {
      const { signal } = watchOptions;
      const unsubscribe = (): void => {
        listeners.delete(listener);
        signal?.removeEventListener("abort", unsubscribe);
      };
      if (signal?.aborted) return unsubscribe;
      listeners.add(listener);
      signal?.addEventListener("abort", unsubscribe, { once: true });
      return unsubscribe;
    },
    async start(startOptions = {}) {
      await reload(startOptions);
      loop ??= watchLoop();
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
