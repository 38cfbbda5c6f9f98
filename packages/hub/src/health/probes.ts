/**
 * What the hub's probes answer (docs/running.md, "The hub"):
 *
 * - liveness (`/healthz`): the process is alive and serving. It passes while the hub is still
 *   starting (loading state can take a while on a large fleet) and while NATS reconnects (the hub
 *   outlives NATS restarts); it fails once the hub has stopped or the NATS connection is closed
 *   for good, both of which a restart cures.
 * - readiness (`/readyz`): the hub may be given work. It fails until the hub has finished
 *   starting and whenever the NATS connection is down, and passes again once NATS is back, so a
 *   replica that cannot reach NATS is taken out of its Service at once.
 */
import type { HealthReport } from "../metrics/http-server.js";

/** The hub's NATS connection: up, reconnecting after a loss, or closed for good. */
export type NatsConnectionState = "connected" | "reconnecting" | "closed";

/** What a started hub says about itself (`Hub.health()`). */
export interface HubHealthSource {
  health(): { ok: boolean; checks: Record<string, string> };
}

/** The hub's two probes, fed by the start sequence and the NATS connection. */
export interface HubProbes {
  /** The hub has finished starting: from now on its own health counts. */
  serving(hub: HubHealthSource): void;
  /** `/healthz`: is the process alive and serving? */
  liveness(): HealthReport;
  /** `/readyz`: may the hub be given work? */
  readiness(): HealthReport;
}

/** Creates the probes of a hub that is starting; `nats` reads the connection's state. */
export function createHubProbes(nats: () => NatsConnectionState): HubProbes {
  let hub: HubHealthSource | undefined;

  /** The hub's own checks (`hub: starting` before it serves) and the NATS connection's state. */
  const checksNow = (): {
    hubOk: boolean;
    natsState: NatsConnectionState;
    checks: Record<string, string>;
  } => {
    const natsState = nats();
    if (hub === undefined) {
      return {
        hubOk: false,
        natsState,
        checks: { hub: "starting", nats: natsState },
      };
    }
    const report = hub.health();
    return {
      hubOk: report.ok,
      natsState,
      checks: { ...report.checks, nats: natsState },
    };
  };

  return {
    serving(started) {
      hub = started;
    },

    liveness() {
      const { hubOk, natsState, checks } = checksNow();
      const starting = hub === undefined;
      return {
        ok: (starting || hubOk) && natsState !== "closed",
        checks,
      };
    },

    readiness() {
      const { hubOk, natsState, checks } = checksNow();
      const reasons: string[] = [];
      if (hub === undefined) reasons.push("the hub has not finished starting");
      else if (!hubOk) reasons.push("the hub is not serving");
      if (natsState !== "connected")
        reasons.push(`the NATS connection is down (${natsState})`);
      return { ok: reasons.length === 0, checks, reasons };
    },
  };
}
