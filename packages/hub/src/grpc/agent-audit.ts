/**
 * How AgentService calls are audited. The actor is `cluster:NAME` only when the caller proved it
 * (a certificate of that cluster, or a Register that succeeded); otherwise `anonymous@PEER` with
 * no role, and the cluster name the caller claimed is only the record's target, so that nobody
 * can put records under another cluster's name. Refusals go through the limit per peer
 * (audit/refusal-audit.ts).
 */
import type { FlotillaError } from "@flotilla/core";
import type { AuditRecord } from "../audit/audit-log.js";
import { refusalPeer, type RefusalAudit } from "../audit/refusal-audit.js";
import type { AuditDeps } from "./unary.js";

/** The prefix of AgentService's full method names, as the audit log records them. */
export const AGENT_METHOD_PREFIX = "/flotilla.v1.AgentService/";

/** What auditing agent calls needs. */
export interface AgentAuditDeps extends AuditDeps {
  readonly refusals: RefusalAudit;
}

/** The audit of one hub's agent calls. */
export interface AgentAudit {
  /** Records a call of `method` by cluster `cluster` that succeeded; resolves once stored. */
  succeeded(method: string, cluster: string): Promise<void>;
  /**
   * Records a refused call (within the limit per peer): as `cluster:C` when the caller proved it
   * is `cluster`, else as `anonymous@PEER`; `targetName` is the cluster it named, if any.
   */
  refused(
    method: string,
    cluster: string | undefined,
    peer: string,
    targetName: string,
    error: FlotillaError,
  ): Promise<void>;
}

export function createAgentAudit(deps: AgentAuditDeps): AgentAudit {
  const record = (
    method: string,
    actor: string,
    targetName: string,
    error?: FlotillaError,
  ): AuditRecord => ({
    atMs: deps.now(),
    actor: actor.slice(0, 256),
    role: actor.startsWith("cluster:") ? "agent" : "",
    method: `${AGENT_METHOD_PREFIX}${method}`,
    targetKind: "Cluster",
    targetName: targetName.slice(0, 256),
    reason: "",
    ...(error === undefined
      ? { outcome: "Succeeded", message: "" }
      : {
          outcome:
            error.code === "unauthenticated" ||
            error.code === "permission_denied"
              ? "Denied"
              : "Failed",
          errorCode: error.code,
          message: error.message.slice(0, 1024),
        }),
  });

  return {
    succeeded: (method, cluster) =>
      deps.audit
        .append(record(method, `cluster:${cluster}`, cluster))
        .then(() => undefined, deps.onAuditError),
    refused: (method, cluster, peer, targetName, error) => {
      const actor =
        cluster === undefined ? `anonymous@${peer}` : `cluster:${cluster}`;
      return deps.refusals.record(
        refusalPeer(cluster === undefined ? undefined : actor, peer),
        record(method, actor, targetName, error),
      );
    },
  };
}
