import { describe, expect, it } from "vitest";
import type { Problem } from "@flotilla/core";
import {
  auditEventToWire,
  auditFilterFromWire,
  loadProtocol,
  wireUint64,
  type AuditEvent,
  type wire,
} from "@flotilla/protocol";

/** A ListAuditEvents request as the server decodes it. */
function listRequest(
  request: wire.ListAuditEventsRequest,
): wire.ListAuditEventsRequest__Output {
  const list = loadProtocol().adminService.ListAuditEvents;
  return list.requestDeserialize(list.requestSerialize(request));
}

const EVENT: AuditEvent = {
  sequence: 7,
  atMs: 1_700_000_000_000,
  actor: "alice",
  role: "operator",
  method: "/flotilla.v1.AdminService/StartUpdateRun",
  targetKind: "UpdateRun",
  targetName: "spring",
  reason: "monthly patch",
  outcome: "Denied",
  errorCode: "permission_denied",
  message: "not allowed",
};

describe("audit codec", () => {
  it("encodes a stored event, the error code only when there is one", () => {
    expect(auditEventToWire(EVENT)).toEqual({
      ...EVENT,
      outcome: "AUDIT_OUTCOME_DENIED",
      errorCode: "ERROR_CODE_PERMISSION_DENIED",
    });
    const encoded = auditEventToWire({
      sequence: EVENT.sequence,
      atMs: EVENT.atMs,
      actor: EVENT.actor,
      role: EVENT.role,
      method: EVENT.method,
      targetKind: EVENT.targetKind,
      targetName: EVENT.targetName,
      reason: "",
      outcome: "Succeeded",
      message: "",
    });
    expect(encoded.outcome).toBe("AUDIT_OUTCOME_SUCCEEDED");
    expect("errorCode" in encoded).toBe(false);
  });

  it("decodes an absent filter as match-everything", () => {
    const problems: Problem[] = [];
    expect(auditFilterFromWire(null, "filter", problems)).toEqual({});
    expect(auditFilterFromWire(undefined, "filter", problems)).toEqual({});
    expect(problems).toEqual([]);
  });

  it("decodes every field of a filter", () => {
    const { filter } = listRequest({
      filter: {
        sinceMs: 10,
        untilMs: 20,
        actor: "alice",
        targetKind: "Bundle",
        targetName: "web",
        method: "/flotilla.v1.AdminService/ApplyBundle",
        outcomes: ["AUDIT_OUTCOME_FAILED", "AUDIT_OUTCOME_SUCCEEDED"],
      },
    });
    const problems: Problem[] = [];
    expect(auditFilterFromWire(filter, "filter", problems)).toEqual({
      sinceMs: 10,
      untilMs: 20,
      actor: "alice",
      targetKind: "Bundle",
      targetName: "web",
      method: "/flotilla.v1.AdminService/ApplyBundle",
      outcomes: ["Failed", "Succeeded"],
    });
    expect(problems).toEqual([]);
  });

  it("refuses UNSPECIFIED and unknown outcomes with their paths, keeping the rest", () => {
    const { filter } = listRequest({
      filter: {
        outcomes: ["AUDIT_OUTCOME_UNSPECIFIED", "AUDIT_OUTCOME_DENIED"],
      },
    });
    const problems: Problem[] = [];
    expect(auditFilterFromWire(filter, "filter", problems)).toEqual({
      outcomes: ["Denied"],
    });
    expect(problems).toEqual([
      {
        path: "filter.outcomes[0]",
        message:
          "must be one of AUDIT_OUTCOME_SUCCEEDED, AUDIT_OUTCOME_DENIED, AUDIT_OUTCOME_FAILED",
        value: "AUDIT_OUTCOME_UNSPECIFIED",
      },
    ]);
  });

  it("accepts exact uint64 values only", () => {
    const problems: Problem[] = [];
    expect(wireUint64(undefined, "x", problems)).toBeUndefined();
    expect(wireUint64(null, "x", problems)).toBeUndefined();
    expect(wireUint64(0, "x", problems)).toBe(0);
    expect(wireUint64(Number.MAX_SAFE_INTEGER, "x", problems)).toBe(
      Number.MAX_SAFE_INTEGER,
    );
    expect(problems).toEqual([]);
    for (const bad of [-1, 1.5, "12", 2 ** 60]) {
      expect(wireUint64(bad, "afterSequence", problems)).toBeUndefined();
    }
    expect(problems.map((p) => [p.path, p.value])).toEqual([
      ["afterSequence", -1],
      ["afterSequence", 1.5],
      ["afterSequence", "12"],
      ["afterSequence", 2 ** 60],
    ]);
    expect(problems[0]?.message).toMatch(/^must be an integer from 0 to \d+$/);
  });
});
