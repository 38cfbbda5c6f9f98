/**
 * The refusal limiter on its own, with the in-memory audit log and a clock the test moves: who
 * counts as one peer, the summary per method and code, the window shared by peers beyond the cap,
 * windows dropped when they end, and everything written when the hub stops. The whole hub over
 * gRPC is in audit-refusals.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { AuditRecord } from "../src/audit/audit-log.js";
import { createMemoryAuditLog } from "../src/audit/memory-audit-log.js";
import {
  createRefusalAudit,
  refusalPeer,
  type RefusalAuditSettings,
} from "../src/audit/refusal-audit.js";

const T0 = Date.parse("2026-12-01T10:00:00Z");

function refusal(
  method: string,
  extra: Partial<AuditRecord> = {},
): AuditRecord {
  return {
    atMs: T0,
    actor: "anonymous@10.0.0.5:40000",
    role: "",
    method: `/flotilla.v1.AdminService/${method}`,
    targetKind: "",
    targetName: "prod",
    reason: "why",
    outcome: "Denied",
    errorCode: "unauthenticated",
    message: "Cannot authenticate",
    ...extra,
  };
}

async function limiter(settings: RefusalAuditSettings) {
  let now = T0;
  const audit = createMemoryAuditLog();
  await audit.start();
  const suppressed: string[] = [];
  const errors: unknown[] = [];
  const refusals = createRefusalAudit(
    {
      audit,
      now: () => now,
      onAuditError: (e) => errors.push(e),
      onSuppressed: (m) => suppressed.push(m),
    },
    settings,
  );
  return {
    refusals,
    audit,
    suppressed,
    errors,
    advance: (ms: number) => {
      now += ms;
    },
    events: async () => (await audit.list({}, { pageSize: 1000 })).events,
  };
}

describe("refusalPeer", () => {
  it.each([
    ["10.0.0.5:40000", "anonymous@10.0.0.5"],
    ["::ffff:10.0.0.5:40000", "anonymous@10.0.0.5"],
    ["::1:40000", "anonymous@::1"],
    ["[2001:db8::1]:40000", "anonymous@2001:db8::1"],
    ["", "anonymous"],
  ])("counts %s as %s, whatever its port", (peer, expected) => {
    expect(refusalPeer(undefined, peer)).toBe(expected);
  });

  it("counts a caller that proved who it is by its identity, not its address", () => {
    expect(refusalPeer("token:ci", "10.0.0.5:40000")).toBe("token:ci");
  });
});

describe("createRefusalAudit", () => {
  it("records the first of each window, then one summary per method and code, written when the window ends", async () => {
    const l = await limiter({ perPeer: 2, windowMs: 60_000, maxPeers: 10 });
    const peer = "anonymous@10.0.0.5";
    for (let i = 0; i < 5; i++)
      await l.refusals.record(peer, refusal("ListClusters"));
    l.advance(1_000);
    await l.refusals.record(peer, refusal("StartUpdateRun"));
    await l.refusals.record(
      peer,
      refusal("StartUpdateRun", { errorCode: "permission_denied" }),
    );
    expect(await l.events()).toHaveLength(2);
    expect(l.suppressed).toHaveLength(5);
    await l.refusals.flush();
    expect(await l.events()).toHaveLength(2);

    l.advance(59_000);
    await l.refusals.flush();
    const summaries = (await l.events()).slice(2);
    expect(summaries.map((e) => [e.method, e.errorCode, e.message])).toEqual([
      [
        "/flotilla.v1.AdminService/ListClusters",
        "unauthenticated",
        "3 refused calls from anonymous@10.0.0.5 not recorded individually between 2026-12-01T10:00:00.000Z and 2026-12-01T10:00:00.000Z: the audit log records at most 2 refusals per peer every 60 s",
      ],
      [
        "/flotilla.v1.AdminService/StartUpdateRun",
        "unauthenticated",
        "1 refused call from anonymous@10.0.0.5 not recorded individually between 2026-12-01T10:00:01.000Z and 2026-12-01T10:00:01.000Z: the audit log records at most 2 refusals per peer every 60 s",
      ],
      [
        "/flotilla.v1.AdminService/StartUpdateRun",
        "permission_denied",
        expect.stringMatching(/^1 refused call /),
      ],
    ]);
    for (const summary of summaries) {
      expect(summary).toMatchObject({
        actor: peer,
        targetKind: "AuditSummary",
        targetName: "",
        reason: "",
        outcome: "Denied",
      });
    }
    // The window is gone: the next refusal is recorded again.
    await l.refusals.record(peer, refusal("ListClusters"));
    expect(await l.events()).toHaveLength(6);
    expect(l.errors).toEqual([]);
  });

  it("writes a window's summary at the peer's next refusal when no flush came first", async () => {
    const l = await limiter({ perPeer: 1, windowMs: 1_000, maxPeers: 10 });
    for (let i = 0; i < 1_235; i++)
      await l.refusals.record(
        "token:ci",
        refusal("ListClusters", { role: "viewer" }),
      );
    l.advance(1_000);
    await l.refusals.record(
      "token:ci",
      refusal("ListClusters", { role: "viewer" }),
    );
    const summary = (await l.events()).find(
      (e) => e.targetKind === "AuditSummary",
    );
    expect(summary).toMatchObject({
      actor: "token:ci",
      role: "viewer",
      message: expect.stringMatching(/^1,234 refused calls from token:ci /),
    });
  });

  it("lets peers beyond the cap share one window, and makes room as windows end", async () => {
    const l = await limiter({ perPeer: 1, windowMs: 1_000, maxPeers: 2 });
    for (const peer of [
      "anonymous@a",
      "anonymous@b",
      "anonymous@c",
      "anonymous@d",
    ]) {
      await l.refusals.record(peer, refusal("ListClusters"));
      await l.refusals.record(peer, refusal("ListClusters"));
    }
    // a and b one each; c and d share the overflow window: one recorded, three counted.
    expect((await l.events()).map((e) => e.actor)).toEqual([
      "anonymous@10.0.0.5:40000",
      "anonymous@10.0.0.5:40000",
      "anonymous@10.0.0.5:40000",
    ]);
    l.advance(1_000);
    await l.refusals.flush();
    const summaries = (await l.events()).filter(
      (e) => e.targetKind === "AuditSummary",
    );
    expect(summaries.map((e) => [e.actor, e.message.split(" not")[0]])).toEqual(
      [
        ["anonymous@a", "1 refused call from anonymous@a"],
        ["anonymous@b", "1 refused call from anonymous@b"],
        ["*", "3 refused calls from peers beyond the 2 tracked at a time"],
      ],
    );
    // Every window ended and was dropped: a new peer gets one of its own.
    await l.refusals.record("anonymous@e", refusal("ListClusters"));
    await l.refusals.record("anonymous@e", refusal("ListClusters"));
    await l.refusals.record("anonymous@f", refusal("ListClusters"));
    expect(l.suppressed).toHaveLength(5 + 1);
    expect(await l.events()).toHaveLength(3 + 3 + 2);
  });

  it("writes every open window's summary when the hub stops", async () => {
    const l = await limiter({ perPeer: 0, windowMs: 3_600_000, maxPeers: 10 });
    await l.refusals.record("anonymous@a", refusal("ListClusters"));
    await l.refusals.flush();
    expect(await l.events()).toEqual([]);
    await l.refusals.flush({ all: true });
    expect((await l.events()).map((e) => e.message.split(" not")[0])).toEqual([
      "1 refused call from anonymous@a",
    ]);
  });
});
