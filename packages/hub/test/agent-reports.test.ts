/**
 * Status reports count only against the cluster's current intent: a report of another generation,
 * of an upgrade or bundle revision the intent does not hold, is acked as not counted (with why)
 * and goes nowhere; a counted one goes to its sink.
 */
import type { ClusterIntent } from "@flotilla/core";
import type { StatusReport } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import {
  reportRejection,
  takeReport,
  type ReportSinks,
} from "../src/grpc/agent-reports.js";

const intent = {
  apiVersion: "flotilla.dev/v1",
  cluster: "c-1",
  generation: 4,
  bundles: { web: { revision: "r2", digest: "sha256:00" } },
  upgrade: { run: "run-1" },
} as unknown as ClusterIntent;

const report = (
  subject: StatusReport["subject"],
  generation = 4,
): StatusReport => ({
  sequence: 9,
  generation,
  subject,
  phase: "Ready",
  reasons: [],
  reasonsTruncated: 0,
  observedAtMs: 1,
});

describe("report acceptance", () => {
  it("counts reports of what the current intent holds", () => {
    expect(
      reportRejection(intent, report({ kind: "upgrade", upgradeId: "run-1" })),
    ).toBe("");
    expect(
      reportRejection(
        intent,
        report({ kind: "bundle", bundle: "web", revision: "r2" }),
      ),
    ).toBe("");
  });

  it("says why a report does not count", () => {
    expect(
      reportRejection(
        intent,
        report({ kind: "upgrade", upgradeId: "run-1" }, 3),
      ),
    ).toBe("generation 3 is not the current intent generation 4");
    expect(
      reportRejection(intent, report({ kind: "upgrade", upgradeId: "run-0" })),
    ).toBe('upgrade "run-0" is not in the current intent');
    expect(
      reportRejection(
        intent,
        report({ kind: "bundle", bundle: "web", revision: "r1" }),
      ),
    ).toBe('bundle "web" revision "r1" is not in the current intent');
    expect(
      reportRejection(
        intent,
        report({ kind: "bundle", bundle: "db", revision: "r2" }),
      ),
    ).toBe('bundle "db" revision "r2" is not in the current intent');
  });
});

describe("taking a report", () => {
  const setup = () => {
    const seen: unknown[] = [];
    const sinks: ReportSinks = {
      upgrade: (cluster, run) => seen.push(["upgrade", cluster, run]),
      bundle: (cluster, r) => seen.push(["bundle", cluster, r.subject]),
    };
    const phases: unknown[] = [];
    const deps = {
      intents: {
        peek: () => undefined,
        current: () => Promise.resolve({ intent, hash: "h" }),
        refresh: () => Promise.resolve({ intent, hash: "h" }),
      },
      sinks,
      onReport: (phase: string, accepted: boolean) =>
        phases.push([phase, accepted]),
    };
    return { seen, phases, deps };
  };

  it("acks a counted report and hands it to its sink", async () => {
    const { seen, phases, deps } = setup();
    const acks: unknown[] = [];
    await takeReport(
      "c-1",
      report({ kind: "upgrade", upgradeId: "run-1" }),
      (ack) => acks.push(ack),
      deps,
    );
    expect(acks).toEqual([
      { sequence: 9, generation: 4, accepted: true, reason: "" },
    ]);
    expect(phases).toEqual([["Ready", true]]);
    expect(seen).toEqual([["upgrade", "c-1", "run-1"]]);
  });

  it("acks a report that does not count and hands it to no one", async () => {
    const { seen, phases, deps } = setup();
    const acks: unknown[] = [];
    await takeReport(
      "c-1",
      report({ kind: "bundle", bundle: "web", revision: "r1" }),
      (ack) => acks.push(ack),
      deps,
    );
    expect(acks).toMatchObject([{ accepted: false }]);
    expect(phases).toEqual([["Ready", false]]);
    expect(seen).toEqual([]);
  });
});

describe("a report on a generation this replica has not seen", () => {
  it("reads the intent again (another replica wrote it) and counts the report against it", async () => {
    const seen: unknown[] = [];
    const newer = { ...intent, generation: 5 } as ClusterIntent;
    let refreshed = 0;
    const acks: unknown[] = [];
    await takeReport(
      "c-1",
      report({ kind: "upgrade", upgradeId: "run-1" }, 5),
      (ack) => acks.push(ack),
      {
        intents: {
          peek: () => ({ intent, hash: "h" }),
          current: () => Promise.resolve({ intent, hash: "h" }),
          refresh: () => {
            refreshed += 1;
            return Promise.resolve({ intent: newer, hash: "h2" });
          },
        },
        sinks: {
          upgrade: (cluster, run) => seen.push([cluster, run]),
          bundle: () => undefined,
        },
      },
    );
    expect(refreshed).toBe(1);
    expect(acks).toMatchObject([{ generation: 5, accepted: true }]);
    expect(seen).toEqual([["c-1", "run-1"]]);
  });
});
