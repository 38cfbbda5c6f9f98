import { describe, expect, it } from "vitest";
import type { Problem } from "@flotilla/core";
import {
  loadProtocol,
  MAX_REASONS,
  statusReportFromWire,
  statusReportToWire,
  type ResourceReason,
  type StatusReport,
  type wire,
} from "@flotilla/protocol";
import { T0, valueOf } from "./fixtures.js";

/** What the hub decodes when an agent sends `status` on its stream. */
function sent(status: wire.StatusReport): wire.StatusReport__Output | null {
  const connect = loadProtocol().agentService.Connect;
  return (
    connect.requestDeserialize(connect.requestSerialize({ status })).status ??
    null
  );
}

function reason(i: number): ResourceReason {
  return {
    kind: "Deployment",
    namespace: "web",
    name: `api-${String(i)}`,
    state: "NotReady",
    message: "0/3 replicas available",
  };
}

const READY: StatusReport = {
  sequence: 3,
  generation: 17,
  subject: { kind: "bundle", bundle: "web", revision: "sha256-abc" },
  phase: "Ready",
  reasons: [],
  reasonsTruncated: 0,
  progressPercent: 100,
  observedAtMs: T0,
};

/** Decodes `overrides` applied to a valid wire report and returns the problems. */
function problemsFor(overrides: Record<string, unknown>): Problem[] {
  const base = sent(statusReportToWire(READY));
  const result = statusReportFromWire({ ...base, ...overrides });
  expect(result.ok).toBe(false);
  return result.ok ? [] : [...result.problems];
}

describe("status report codec", () => {
  it("carries every phase and both subjects through protobuf unchanged", () => {
    const reports: StatusReport[] = [
      READY,
      {
        ...READY,
        phase: "NotReady",
        reasons: [reason(1), { ...reason(2), namespace: "" }],
        reasonsTruncated: 4,
        message: "2 resources not ready",
        progressPercent: 60,
      },
      {
        ...READY,
        subject: { kind: "upgrade", upgradeId: "upgrade-1-31" },
        phase: "Failed",
        error: "node pool system: drain timed out",
      },
      {
        ...READY,
        phase: "Pending",
        message: "maintenance window closed until 2026-03-07T02:00:00Z",
        pendingUntilMs: T0 + 3_600_000,
      },
      { ...READY, phase: "Applying" },
      { ...READY, phase: "Applied" },
      { ...READY, phase: "Modified", reasons: [reason(3)] },
    ];
    for (const report of reports) {
      const withoutProgress: StatusReport = { ...report };
      Reflect.deleteProperty(withoutProgress, "progressPercent");
      const variants = [report, withoutProgress];
      for (const r of variants) {
        expect(
          valueOf(statusReportFromWire(sent(statusReportToWire(r)))),
        ).toEqual(r);
      }
    }
  });

  it("caps reasons when encoding and counts the ones left out", () => {
    const reasons = Array.from({ length: MAX_REASONS + 5 }, (_, i) =>
      reason(i),
    );
    const encoded = statusReportToWire({
      ...READY,
      phase: "NotReady",
      reasons,
      reasonsTruncated: 2,
      message: "x".repeat(5000),
    });
    expect(encoded.reasons).toHaveLength(MAX_REASONS);
    expect(encoded.reasonsTruncated).toBe(7);
    expect(encoded.message).toHaveLength(1024);
    expect(statusReportFromWire(sent(encoded)).ok).toBe(true);
  });

  it("refuses reports over the limits, with the path of each field", () => {
    const tooMany = Array.from({ length: MAX_REASONS + 1 }, (_, i) =>
      reason(i),
    );
    expect(problemsFor({ reasons: tooMany })).toEqual([
      {
        path: "status.reasons",
        message: "must have at most 20 items",
        value: tooMany,
      },
    ]);
    const long = { ...reason(0), message: "m".repeat(1025), name: "" };
    expect(
      problemsFor({ reasons: [reason(0), long] }).map((p) => [
        p.path,
        p.message,
      ]),
    ).toEqual([
      ["status.reasons[1].name", "must not be empty"],
      ["status.reasons[1].message", "must be at most 1024 characters"],
    ]);
    expect(
      problemsFor({ error: "e".repeat(4097), phase: "STATUS_PHASE_FAILED" }),
    ).toEqual([
      expect.objectContaining({
        path: "status.error",
        message: "must be at most 4096 characters",
      }),
    ]);
  });

  it("refuses unknown and unspecified phases", () => {
    for (const phase of ["STATUS_PHASE_UNSPECIFIED", 42, "READY"]) {
      const [problem] = problemsFor({ phase });
      expect(problem?.path).toBe("status.phase");
      expect(problem?.message).toContain(
        "must be one of STATUS_PHASE_APPLYING",
      );
      expect(problem?.value).toBe(phase);
    }
  });

  it("refuses numbers that 64-bit fields cannot carry exactly, and out-of-range values", () => {
    const big = sent({
      ...statusReportToWire(READY),
      generation: "9007199254740993",
    });
    const result = statusReportFromWire(big);
    expect(result.ok ? [] : result.problems.map((p) => p.path)).toEqual([
      "status.generation",
    ]);
    expect(problemsFor({ generation: 0 }).map((p) => p.path)).toEqual([
      "status.generation",
    ]);
    expect(problemsFor({ progressPercent: 101 }).map((p) => p.message)).toEqual(
      ["must be at most 100"],
    );
    expect(problemsFor({ observedAtMs: 0 }).map((p) => p.path)).toEqual([
      "status.observedAtMs",
    ]);
  });

  it("refuses a missing or doubled subject and fields of the wrong phase", () => {
    expect(problemsFor({ bundle: undefined })).toEqual([
      {
        path: "status.bundle",
        message: "must set exactly one of bundle, upgradeId",
      },
    ]);
    expect(problemsFor({ upgradeId: "u-1" }).map((p) => p.path)).toEqual([
      "status.bundle",
    ]);
    expect(
      problemsFor({ phase: "STATUS_PHASE_FAILED" }).map((p) => p.message),
    ).toEqual(["is required when phase is STATUS_PHASE_FAILED"]);
    expect(problemsFor({ error: "boom" }).map((p) => p.path)).toEqual([
      "status.error",
    ]);
    expect(problemsFor({ pendingUntilMs: T0 }).map((p) => p.path)).toEqual([
      "status.pendingUntilMs",
    ]);
    expect(
      problemsFor({ bundle: { bundle: "Not_A_Label", revision: "" } }).map(
        (p) => p.path,
      ),
    ).toEqual(["status.bundle.bundle", "status.bundle.revision"]);
  });

  it("refuses garbage with a problem instead of throwing", () => {
    for (const raw of [null, undefined, "status", 42, []]) {
      const result = statusReportFromWire(raw, "msg");
      expect(result.ok).toBe(false);
    }
  });
});
