/**
 * The `watch` half of the KubeGateway contract, shared by every adapter: a new listener first gets
 * the current status of every known bundle, then every change, until it is removed or its signal
 * aborts.
 */
import type {
  BundleStatus,
  BundleStatusListener,
  GatewayCallOptions,
} from "./gateway.js";

/** The listeners of one gateway. */
export interface StatusListeners {
  /** Calls every listener with `status`. */
  emit(status: BundleStatus): void;
  /** Adds `listener` (after giving it `current`); returns the function that removes it. */
  watch(
    listener: BundleStatusListener,
    current: Iterable<BundleStatus>,
    options?: GatewayCallOptions,
  ): () => void;
  /** Removes every listener. */
  clear(): void;
}

/** Creates an empty {@link StatusListeners}. */
export function createStatusListeners(): StatusListeners {
  const listeners = new Set<BundleStatusListener>();
  return {
    emit(status) {
      for (const listener of [...listeners]) listener(status);
    },
    watch(listener, current, options = {}) {
      const { signal } = options;
      const stop = (): void => {
        listeners.delete(listener);
        signal?.removeEventListener("abort", stop);
      };
      if (signal?.aborted) return stop;
      for (const status of current) listener(status);
      listeners.add(listener);
      signal?.addEventListener("abort", stop, { once: true });
      return stop;
    },
    clear() {
      listeners.clear();
    },
  };
}
