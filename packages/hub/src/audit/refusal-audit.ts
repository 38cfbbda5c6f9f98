/**
 * Refused calls (UNAUTHENTICATED and PERMISSION_DENIED on AdminService, refused agent streams,
 * refused Register and RenewIdentity) are audited, but a flood of them must not grow the audit
 * stream without limit. Per peer (the identity it proved, else its address without the port, so
 * that new connections do not make new peers) the first `perPeer` refusals of a window are
 * recorded one by one; later ones are only counted. When the window ends, one summary record per
 * method and code (target kind `AuditSummary`) says how many were not recorded, and between when
 * and when. Only the audit is limited: every refused call is answered as before.
 *
 * Memory is bounded: at most `maxPeers` peers have a window at a time; refusals of any further
 * peer share one more window (actor `*`) until windows end and make room. A window is dropped
 * when it ends: by the hub's tick ({@link RefusalAudit.flush}), or by the peer's next refusal.
 */
import type { AuditDeps } from "../grpc/unary.js";
import type { AuditRecord } from "./audit-log.js";

/** How much of a flood of refusals is recorded one by one. */
export interface RefusalAuditSettings {
  /** Refusals recorded one by one per peer and window; later ones are counted. */
  readonly perPeer: number;
  readonly windowMs: number;
  /** Peers with a window at a time; further ones share one. */
  readonly maxPeers: number;
}

/** 100 a minute per peer, 10,000 peers: a flood costs at most about 1,000,000 records a minute. */
export const DEFAULT_REFUSAL_AUDIT: RefusalAuditSettings = {
  perPeer: 100,
  windowMs: 60_000,
  maxPeers: 10_000,
};

/** The target kind of summary records. */
export const AUDIT_SUMMARY_KIND = "AuditSummary";

/** The peer whose window refusals of peers beyond `maxPeers` share. */
const OVERFLOW_PEER = "*";

export interface RefusalAuditDeps extends AuditDeps {
  /** A refusal counted, not recorded; `method` as the audit records it (the full name). */
  readonly onSuppressed?: (method: string) => void;
}

/** The audit of refused calls for one hub. */
export interface RefusalAudit {
  /**
   * Records `record` (a refusal) unless `peer` has used its window's allowance, then counts it.
   * Resolves once the record is stored, or at once when it is counted.
   */
  record(peer: string, record: AuditRecord): Promise<void>;
  /** Writes the summaries of windows that ended (all windows with `all`: the hub stops). */
  flush(options?: { readonly all?: boolean }): Promise<void>;
}

/**
 * The peer a refusal counts for: `actor` when the caller proved who it is, else
 * `anonymous@ADDRESS` of grpc-js's `getPeer()` (`HOST:PORT`; IPv4 as IPv6 `::ffff:` counts as
 * IPv4).
 */
export function refusalPeer(actor: string | undefined, peer: string): string {
  if (actor !== undefined) return actor;
  let address = peer.replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1");
  address = address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1");
  return address === "" ? "anonymous" : `anonymous@${address}`;
}

interface Suppressed {
  readonly record: AuditRecord;
  count: number;
  readonly firstAtMs: number;
  lastAtMs: number;
}

interface Window {
  readonly startMs: number;
  recorded: number;
  /** By method, outcome and code. */
  readonly suppressed: Map<string, Suppressed>;
}

/** 1234567 → "1,234,567". */
function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

export function createRefusalAudit(
  deps: RefusalAuditDeps,
  settings: RefusalAuditSettings = DEFAULT_REFUSAL_AUDIT,
): RefusalAudit {
  // Insertion order is start order (a window that ends is deleted before its peer gets a new
  // one), so the windows that ended are at the front.
  const windows = new Map<string, Window>();
  const ended = (window: Window, nowMs: number): boolean =>
    nowMs >= window.startMs + settings.windowMs;

  const append = (record: AuditRecord): Promise<void> =>
    deps.audit.append(record).then(() => undefined, deps.onAuditError);

  const summaries = (peer: string, window: Window): AuditRecord[] =>
    [...window.suppressed.values()].map(
      ({ record, count, firstAtMs, lastAtMs }) => {
        const from =
          peer === OVERFLOW_PEER
            ? `peers beyond the ${thousands(settings.maxPeers)} tracked at a time`
            : peer;
        const base = {
          ...record,
          atMs: deps.now(),
          actor: peer.slice(0, 256),
          targetKind: AUDIT_SUMMARY_KIND,
          targetName: "",
          reason: "",
          message:
            `${thousands(count)} refused ${count === 1 ? "call" : "calls"} from ${from} not recorded individually ` +
            `between ${new Date(firstAtMs).toISOString()} and ${new Date(lastAtMs).toISOString()}: ` +
            `the audit log records at most ${thousands(settings.perPeer)} refusals per peer every ${String(settings.windowMs / 1000)} s`,
        };
        return peer === OVERFLOW_PEER ? { ...base, role: "" } : base;
      },
    );

  const close = (peer: string, window: Window): Promise<void> => {
    windows.delete(peer);
    return Promise.all(summaries(peer, window).map(append)).then(
      () => undefined,
    );
  };

  /**
   * The open window of `peer`, opening one (or the shared one when too many are open). It does
   * not wait for the summaries of a window it closes: concurrent refusals of the peer must find
   * the new window at once.
   */
  const windowOf = (peer: string, nowMs: number): Window => {
    let key = peer;
    let window = windows.get(key);
    if (window === undefined && windows.size >= settings.maxPeers) {
      key = OVERFLOW_PEER;
      window = windows.get(key);
    }
    if (window !== undefined && ended(window, nowMs)) {
      void close(key, window);
      window = undefined;
    }
    if (window === undefined) {
      window = { startMs: nowMs, recorded: 0, suppressed: new Map() };
      windows.set(key, window);
    }
    return window;
  };

  return {
    async record(peer, record) {
      const nowMs = deps.now();
      const window = windowOf(peer, nowMs);
      if (window.recorded < settings.perPeer) {
        window.recorded += 1;
        await append(record);
        return;
      }
      const key = `${record.method} ${record.outcome} ${record.errorCode ?? ""}`;
      const counted = window.suppressed.get(key);
      if (counted === undefined) {
        window.suppressed.set(key, {
          record,
          count: 1,
          firstAtMs: nowMs,
          lastAtMs: nowMs,
        });
      } else {
        counted.count += 1;
        counted.lastAtMs = nowMs;
      }
      deps.onSuppressed?.(record.method);
    },

    async flush(options = {}) {
      const nowMs = deps.now();
      const due: [string, Window][] = [];
      for (const entry of windows) {
        if (options.all !== true && !ended(entry[1], nowMs)) break;
        due.push(entry);
      }
      await Promise.all(due.map(([peer, window]) => close(peer, window)));
    },
  };
}
