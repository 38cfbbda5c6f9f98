/**
 * `flotilla preview` (the hub's plan, drawn by the offline renderer) and `flotilla audit list|watch`
 * against a fake hub.
 */
import { plan, type PlanOutput } from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { renderPlan } from "../src/render/plan-table.js";
import { createStyle } from "../src/render/style.js";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { memoryIo, NOW_MS } from "./fixtures.js";

const STRATEGY = {
  stages: [
    {
      name: "canary",
      groups: [{ name: "canary", memberSelector: { byLabel: "env=canary" } }],
    },
    {
      name: "prod",
      groups: [
        {
          name: "prod",
          memberSelector: { byLabel: "env=prod" },
          maxConcurrency: 2,
        },
      ],
    },
  ],
};

/** The plan a hub computes for STRATEGY over its clusters (core's own planner). */
function hubPlan(): PlanOutput {
  const result = plan({
    clusters: [
      { name: "c-1", labels: { env: "canary" } },
      { name: "p-1", labels: { env: "prod" } },
      { name: "p-2", labels: { env: "prod" } },
      { name: "lab-1", labels: { env: "lab" } },
    ],
    strategy: STRATEGY,
  });
  if (!result.ok) throw new Error("fixture plan failed");
  return result.value;
}

describe("flotilla preview", () => {
  it("sends a strategy file and selector, and draws the hub's plan exactly as flotilla plan does", async () => {
    const planned = hubPlan();
    await using hub = await startFakeHub({
      unary: { PreviewPlan: () => ({ planJson: JSON.stringify(planned) }) },
    });
    const io = memoryIo({ "s.json": JSON.stringify(STRATEGY) });
    const { code, out, err } = await cliAgainst(
      hub,
      ["preview", "-f", "s.json", "-l", "env!=lab"],
      io,
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(hub.requests("PreviewPlan")).toEqual([
      {
        strategyJson: JSON.stringify(STRATEGY),
        labelSelector: "env!=lab",
        strategy: "strategyJson",
      },
    ]);
    expect(out).toBe(
      renderPlan(planned, { width: 80, style: createStyle(false), all: false }),
    );
    expect(out).toMatch(
      /^Plan: staged update run, 2 stages, 2 groups, 3 clusters\n/,
    );
    expect(out).toContain("Unassigned (1): lab-1");
  });

  it("previews a stored strategy or a bundle, and prints the plan object with -o json", async () => {
    const planned = hubPlan();
    await using hub = await startFakeHub({
      unary: { PreviewPlan: () => ({ planJson: JSON.stringify(planned) }) },
    });
    const json = await cliAgainst(hub, [
      "preview",
      "--strategy",
      "canary-first",
      "-o",
      "json",
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toEqual(planned);
    await cliAgainst(hub, ["preview", "--bundle", "web"]);
    expect(hub.requests("PreviewPlan").map((r) => r["strategy"])).toEqual([
      "updateStrategyName",
      "bundle",
    ]);
  });

  it("needs exactly one source, exit 2", async () => {
    await using hub = await startFakeHub({});
    const { code, err } = await cliAgainst(hub, [
      "preview",
      "--strategy",
      "a",
      "--bundle",
      "b",
    ]);
    expect(code).toBe(2);
    expect(err).toContain(
      "give one of --strategy NAME, -f FILE and --bundle NAME",
    );
  });

  it("refuses a hub answer that is not a plan, exit 1", async () => {
    await using hub = await startFakeHub({
      unary: { PreviewPlan: () => ({ planJson: '{"waves": 3}' }) },
    });
    const { code, err } = await cliAgainst(hub, ["preview", "--bundle", "web"]);
    expect(code).toBe(1);
    expect(err).toBe(
      "flotilla: The hub's plan is not a plan this client can read\n",
    );
  });
});

const EVENTS: wire.AuditEvent[] = [
  {
    sequence: 41,
    atMs: NOW_MS - 20 * 60_000,
    actor: "alice",
    role: "admin",
    method: "/flotilla.v1.AdminService/StartUpdateRun",
    targetKind: "UpdateRun",
    targetName: "upgrade-1-31",
    reason: "change window open",
    outcome: "AUDIT_OUTCOME_SUCCEEDED",
  },
  {
    sequence: 42,
    atMs: NOW_MS - 5 * 60_000,
    actor: "bob",
    role: "viewer",
    method: "/flotilla.v1.AdminService/ApproveGate",
    targetKind: "UpdateRun",
    targetName: "upgrade-1-31",
    outcome: "AUDIT_OUTCOME_DENIED",
    errorCode: "ERROR_CODE_PERMISSION_DENIED",
    message: "viewer may not approve gates",
  },
];

describe("flotilla audit", () => {
  it("sends every filter (--actor filters here) and prints a table", async () => {
    await using hub = await startFakeHub({
      unary: { ListAuditEvents: () => ({ events: EVENTS, nextPageToken: "" }) },
    });
    const { code, out, err } = await cliAgainst(
      hub,
      [
        "audit",
        "list",
        "--actor",
        "bob",
        "--method",
        "ApproveGate",
        "--target-kind",
        "UpdateRun",
        "--target",
        "upgrade-1-31",
        "--since",
        "1h",
        "--outcome",
        "Denied",
        "--outcome",
        "Failed",
      ],
      memoryIo({}, { env: { FLOTILLA_ACTOR: "auditor" } }),
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(hub.calls[0]?.actor).toBe("auditor");
    expect(hub.requests("ListAuditEvents")[0]?.["filter"]).toMatchObject({
      actor: "bob",
      method: "/flotilla.v1.AdminService/ApproveGate",
      targetKind: "UpdateRun",
      targetName: "upgrade-1-31",
      sinceMs: NOW_MS - 3_600_000,
      outcomes: ["AUDIT_OUTCOME_DENIED", "AUDIT_OUTCOME_FAILED"],
    });
    const lines = out.split("\n");
    expect(lines[0]).toMatch(/^TIME +ACTOR +METHOD +TARGET +OUTCOME +REASON$/);
    expect(lines[1]).toMatch(
      /^2026-03-02T09:40:00Z +alice +StartUpdateRun +UpdateRun\/upgrade-1-31 +Succeeded +change window open$/,
    );
    expect(lines[2]).toMatch(
      /^2026-03-02T09:55:00Z +bob +ApproveGate +UpdateRun\/upgrade-1-31 +Denied \(permission_denied\)$/,
    );
  });

  it("prints one line per streamed event and exits 3 when the hub ends the stream", async () => {
    await using hub = await startFakeHub({
      streams: {
        WatchAuditEvents: (call) => {
          for (const event of EVENTS) call.write({ event });
          call.end();
        },
      },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "audit",
      "watch",
      "--after",
      "40",
    ]);
    expect(code).toBe(3);
    expect(out.split("\n")).toEqual([
      "#41  2026-03-02T09:40:00Z  alice  StartUpdateRun  UpdateRun/upgrade-1-31  Succeeded  reason: change window open",
      "#42  2026-03-02T09:55:00Z  bob  ApproveGate  UpdateRun/upgrade-1-31  Denied (permission_denied)  viewer may not approve gates",
      "",
    ]);
    expect(err).toContain("ended the audit stream");
    expect(hub.calls).toEqual([]);
  });

  it("prints one JSON object a line with -o json", async () => {
    await using hub = await startFakeHub({
      streams: {
        WatchAuditEvents: (call) => {
          call.write({ event: EVENTS[0] });
          call.end();
        },
      },
    });
    const { out } = await cliAgainst(hub, ["audit", "watch", "-o", "json"]);
    const [line] = out.trimEnd().split("\n");
    expect(JSON.parse(line ?? "")).toMatchObject({
      sequence: 41,
      actor: "alice",
      outcome: "AUDIT_OUTCOME_SUCCEEDED",
    });
  });
});
