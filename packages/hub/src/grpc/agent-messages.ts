/**
 * The messages of an agent whose session is open, one handler per kind. Each is validated before
 * it touches any state; an invalid one throws the error that refuses the stream. A session that a
 * newer one replaced is refused at its next message.
 */
import { FlotillaError, type Problem } from "@flotilla/core";
import {
  agentFactsFromWire,
  type CatalogueRefusal,
  heartbeatFromWire,
  maintenanceFromWire,
  statusReportFromWire,
  type StatusReport,
  type wire,
} from "@flotilla/protocol";
import type {
  ClusterRegistry,
  SessionHandle,
} from "../clusters/cluster-registry.js";

export interface AgentMessageDeps {
  readonly registry: Pick<
    ClusterRegistry,
    "isCurrent" | "updateFacts" | "seen" | "updateMaintenance"
  >;
  /** A valid status report of the session's cluster. */
  readonly report: (cluster: string, report: StatusReport) => Promise<void>;
  /**
   * The agent's version catalogue was refused; its other facts were taken and the cluster keeps
   * its previous catalogue (docs/engine.md#the-version-catalogue).
   */
  readonly onCatalogueRefused?: (
    cluster: string,
    reason: CatalogueRefusal,
    problems: readonly Problem[],
  ) => void;
}

export async function handleAgentMessage(
  message: wire.AgentMessage__Output,
  session: SessionHandle,
  deps: AgentMessageDeps,
): Promise<void> {
  const { registry } = deps;
  if (!registry.isCurrent(session)) {
    throw new FlotillaError("failed_precondition", "This session was replaced");
  }
  switch (message.body) {
    case "hello":
      throw new FlotillaError(
        "invalid_argument",
        "hello was already sent on this stream",
      );
    case "facts": {
      const decoded = agentFactsFromWire(message.facts, "facts");
      if (!decoded.ok) throw FlotillaError.invalid("facts", decoded.problems);
      const refused = decoded.value.refusedCatalogue;
      if (refused !== undefined)
        deps.onCatalogueRefused?.(
          session.cluster,
          refused.reason,
          refused.problems,
        );
      await registry.updateFacts(session, decoded.value.facts, {
        keepCatalogue: refused !== undefined,
      });
      return;
    }
    case "heartbeat": {
      const beat = heartbeatFromWire(message.heartbeat, "heartbeat");
      if (!beat.ok) throw FlotillaError.invalid("heartbeat", beat.problems);
      registry.seen(session, beat.value.lastAppliedGeneration);
      return;
    }
    case "windowsChanged": {
      const raw = message.windowsChanged?.maintenance;
      if (raw === null || raw === undefined) {
        await registry.updateMaintenance(session, undefined);
        return;
      }
      const maintenance = maintenanceFromWire(
        raw,
        "windowsChanged.maintenance",
      );
      if (!maintenance.ok) {
        throw FlotillaError.invalid("windows", maintenance.problems);
      }
      await registry.updateMaintenance(session, maintenance.value);
      return;
    }
    case "status": {
      const report = statusReportFromWire(message.status, "status");
      if (!report.ok) {
        throw FlotillaError.invalid("status report", report.problems);
      }
      registry.seen(session);
      await deps.report(session.cluster, report.value);
      return;
    }
    case undefined:
      throw new FlotillaError("invalid_argument", "Empty agent message");
  }
}
