/**
 * The agent's gauges that are read when Prometheus scrapes, not pushed by components: each
 * `collect` asks the running agents where they stand, so a gauge can never drift from the truth
 * (no missed decrement after a crash in some code path) and series of bundles that left the
 * intent disappear by themselves.
 *
 * * `flotilla_agent_hub_sessions{state}`: how many of the process's agents have their hub session
 *   in each state; every state always has a series (0 or 1 each in a one-cluster agent).
 * * `flotilla_agent_hub_connected{address}`: how many of the process's agents have a welcomed
 *   session with the hub at each of its addresses; every configured address always has a series,
 *   so a replica nobody is connected to shows as 0 (a hub has a handful of addresses, not
 *   thousands).
 * * `flotilla_agent_bundle_resources_not_ready{bundle}`: objects of each followed bundle that were
 *   not Ready in the status last reported (NotReady or Modified: every listed object whose state
 *   is not Ready, plus those left out of the capped list), summed over the process's agents.
 * * `flotilla_simulated_bundle_error_ratio{cluster,bundle}`: simulated clusters only, the error
 *   ratio the applied revision of each bundle sets (docs/agent.md#simulated-error-ratio), so that
 *   metric gates can be rehearsed against the agent's own /metrics.
 * * `flotilla_agent_identity_certificate_expiry_timestamp_seconds`: the earliest notAfter of the
 *   identity certificates held. Registered only when the agent has identities, so a
 *   plaintext agent never exposes a 0 that an expiry alert would take for "expired in 1970".
 */
import type { StatusReportInput } from "../hub/status-outbox.js";
import type { SessionState } from "../hub/session-events.js";
import { Gauge, type Registry } from "prom-client";

/** Every session state, in the order of its life. */
const SESSION_STATES: readonly SessionState[] = [
  "idle",
  "connecting",
  "connected",
  "waiting",
  "stopped",
];

/** What the gauges read at scrape time; each call must be cheap and must not throw. */
export interface AgentGaugeSources {
  /** The hub session state of every agent in the process. */
  readonly sessionStates: () => Iterable<SessionState>;
  /**
   * The hub's configured addresses, and the address of every agent's welcomed session (agents not
   * connected left out); absent, no `flotilla_agent_hub_connected`.
   */
  readonly hubAddresses?: {
    readonly configured: readonly string[];
    readonly connected: () => Iterable<string>;
  };
  /** The current status of every item of every agent: what the hub was last told. */
  readonly statuses: () => Iterable<StatusReportInput>;
  /** The certificate expiry (epoch ms) of every identity held; absent without identities. */
  readonly identityExpiriesMs?: () => Iterable<number>;
  /** Simulated clusters only: each bundle's simulated error ratio (simulated/error-ratio.ts). */
  readonly simulatedErrorRatios?: () => Iterable<{
    readonly cluster: string;
    readonly bundle: string;
    readonly ratio: number;
  }>;
}

/** How many objects a bundle status says are not Ready. */
export function resourcesNotReady(report: StatusReportInput): number {
  if (report.phase !== "NotReady" && report.phase !== "Modified") return 0;
  const listed = report.reasons.filter((r) => r.state !== "Ready").length;
  return listed + report.reasonsTruncated;
}

/** Registers the scrape-time gauges in `registry`. */
export function registerAgentGauges(
  registry: Registry,
  sources: AgentGaugeSources,
): void {
  const registers = [registry];
  new Gauge({
    name: "flotilla_agent_hub_sessions",
    help: "Hub sessions of this process's agents, by state",
    labelNames: ["state"] as const,
    registers,
    collect() {
      const counts = new Map<SessionState, number>(
        SESSION_STATES.map((s) => [s, 0]),
      );
      for (const state of sources.sessionStates())
        counts.set(state, (counts.get(state) ?? 0) + 1);
      for (const [state, count] of counts) this.set({ state }, count);
    },
  });
  const { hubAddresses } = sources;
  if (hubAddresses !== undefined)
    new Gauge({
      name: "flotilla_agent_hub_connected",
      help: "Hub sessions of this process's agents that are welcomed, by the hub address they are connected to",
      labelNames: ["address"] as const,
      registers,
      collect() {
        const counts = new Map<string, number>(
          hubAddresses.configured.map((a) => [a, 0]),
        );
        for (const address of hubAddresses.connected())
          counts.set(address, (counts.get(address) ?? 0) + 1);
        for (const [address, count] of counts) this.set({ address }, count);
      },
    });
  new Gauge({
    name: "flotilla_agent_bundle_resources_not_ready",
    help: "Objects of followed bundles not Ready in the last status reported, by bundle",
    labelNames: ["bundle"] as const,
    registers,
    collect() {
      const counts = new Map<string, number>();
      for (const report of sources.statuses()) {
        if (report.subject.kind !== "bundle") continue;
        const { bundle } = report.subject;
        counts.set(
          bundle,
          (counts.get(bundle) ?? 0) + resourcesNotReady(report),
        );
      }
      // Bundles no longer followed lose their series.
      this.reset();
      for (const [bundle, count] of counts) this.set({ bundle }, count);
    },
  });
  const { simulatedErrorRatios } = sources;
  if (simulatedErrorRatios !== undefined)
    new Gauge({
      name: "flotilla_simulated_bundle_error_ratio",
      help: "Simulated clusters: the error ratio the applied revision of each bundle sets (annotation simulated.flotilla.dev/error-ratio), by cluster and bundle",
      labelNames: ["cluster", "bundle"] as const,
      registers,
      collect() {
        // Bundles removed, or whose revision sets no ratio, lose their series.
        this.reset();
        for (const { cluster, bundle, ratio } of simulatedErrorRatios())
          this.set({ cluster, bundle }, ratio);
      },
    });
  const { identityExpiriesMs } = sources;
  if (identityExpiriesMs === undefined) return;
  new Gauge({
    name: "flotilla_agent_identity_certificate_expiry_timestamp_seconds",
    help: "Earliest notAfter of the identity certificates this process holds, Unix seconds",
    registers,
    collect() {
      let earliest = Number.POSITIVE_INFINITY;
      for (const ms of identityExpiriesMs()) earliest = Math.min(earliest, ms);
      // No identity loaded: no sample rather than 0 (a label-less gauge resets to 0).
      if (Number.isFinite(earliest)) this.set(earliest / 1000);
      else this.remove({});
    },
  });
}
