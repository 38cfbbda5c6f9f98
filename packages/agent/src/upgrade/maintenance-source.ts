/**
 * The `MaintenanceSource` port: where the agent reads its owner's maintenance windows and freezes
 * (docs/semantics.md#maintenance-windows). The simulated cluster reads a local file; the Kubernetes
 * backend reads a ConfigMap (windows/configmap-maintenance-source.ts). Both follow one rule:
 * invalid content keeps the last valid configuration in force and raises an error condition that
 * the agent reports to the hub.
 */
import type { Maintenance, Problem } from "@flotilla/core";
import { compact } from "@flotilla/core";

/** Why the latest content was not taken: where it came from, every problem with its path. */
export interface MaintenanceError {
  /** The file or object read, e.g. `/etc/flotilla/windows.yaml`. */
  readonly source: string;
  /** One line: `Cannot load maintenance windows from "…": path: message (got value)`. */
  readonly message: string;
  readonly problems: readonly Problem[];
}

/** What is in force, and whether the latest content was refused. */
export interface MaintenanceState {
  /** The last valid configuration; undefined means no constraints ("any time"). */
  readonly maintenance?: Maintenance;
  /** Set while the latest content is invalid or unreadable. */
  readonly error?: MaintenanceError;
}

/** Emitted when the configuration in force or the error condition changes. */
export interface WindowsChanged {
  readonly type: "WindowsChanged";
  readonly state: MaintenanceState;
}

/** The owner's windows as the agent sees them. */
export interface MaintenanceSource {
  /** What is in force now. */
  current(): MaintenanceState;
  /** Reads the source again; emits WindowsChanged when something changed. Never rejects for bad content. */
  reload(options?: {
    readonly signal?: AbortSignal;
  }): Promise<MaintenanceState>;
  /** Calls `listener` on every change until unsubscribed or `options.signal` aborts. */
  watch(
    listener: (event: WindowsChanged) => void,
    options?: { readonly signal?: AbortSignal },
  ): () => void;
}

/** A source whose configuration never changes (inline `maintenance` in a simulated config). */
export function createStaticMaintenanceSource(
  maintenance: Maintenance | undefined,
): MaintenanceSource {
  const state: MaintenanceState = compact({ maintenance });
  return {
    current: () => state,
    reload: (options) =>
      new Promise((resolve) => {
        options?.signal?.throwIfAborted();
        resolve(state);
      }),
    watch: () => () => undefined,
  };
}
