/**
 * Listeners that come and go: `add` returns the unsubscribe function and also unsubscribes when
 * its signal aborts; `emit` calls every listener registered when it starts.
 */
export interface ListenerSet<E> {
  add(
    listener: (event: E) => void,
    options?: { readonly signal?: AbortSignal },
  ): () => void;
  emit(event: E): void;
}

export function createListenerSet<E = void>(): ListenerSet<E> {
  const listeners = new Set<(event: E) => void>();
  return {
    add(listener, options = {}) {
      const { signal } = options;
      const stop = (): void => {
        listeners.delete(listener);
        signal?.removeEventListener("abort", stop);
      };
      if (signal?.aborted) return stop;
      listeners.add(listener);
      signal?.addEventListener("abort", stop, { once: true });
      return stop;
    },
    emit(event) {
      for (const listener of [...listeners]) listener(event);
    },
  };
}
