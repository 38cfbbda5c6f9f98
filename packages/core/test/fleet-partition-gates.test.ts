import { describe, expect, it } from "vitest";
import type { Measurement } from "../src/metrics/analysis.js";
import {
  fillGateQuery,
  judgeGateOutcome,
  type PartitionGateRecord,
} from "../src/fleet/rollout-gates.js";
import { rolloutPass, type PassInput } from "../src/fleet/rollout-pass.js";
import { parseRolloutStrategy } from "../src/fleet/strategy.js";
import {
  allReady,
  cluster,
  notReadyAt,
  readyAt,
  strategy,
} from "./fleet-fixtures.js";

const NOW = Date.UTC(2026, 2, 2, 10);

const GATE = {
  name: "errors",
  type: "Metric",
  query: 'sum(rate(errors{cluster=~"{{clusters}}",bundle="{{bundle}}"}[1m]))',
  successCondition: "result[0] < 0.01",
  interval: "10s",
};

const RAW = {
  partitions: [
    { name: "canary", clusterSelector: { matchLabels: { ring: "0" } } },
    { name: "rest", clusterSelector: { matchLabels: { ring: "1" } } },
  ],
  gates: [GATE],
};

const TARGETS = [
  cluster("a", { ring: "0" }),
  cluster("b", { ring: "0" }),
  cluster("c", { ring: "1" }),
  cluster("d", { ring: "1" }),
];

function problemsOf(raw: unknown): { path: string; message: string }[] {
  const parsed = parseRolloutStrategy(raw, "rolloutStrategy");
  return parsed.ok
    ? []
    : parsed.problems.map((p) => ({ path: p.path, message: p.message }));
}

function pass(
  records: Record<string, PartitionGateRecord> = {},
  extra: Partial<PassInput> = {},
) {
  return rolloutPass({
    strategy: strategy(RAW),
    targets: TARGETS,
    clusterGroups: [],
    revision: "rev-2",
    // The canary holds rev-2 and is Ready; the rest hold rev-1.
    deployments: new Map([
      ...allReady(["a", "b"], "rev-2"),
      ...allReady(["c", "d"], "rev-1"),
    ]),
    nowMs: NOW,
    bundle: "web",
    gateRecords: (partition, gate) => records[`${partition}/${gate}`],
    ...extra,
  });
}

const measured = (values: number[], atMs: number): Measurement =>
  judgeGateOutcome(strategy(RAW).gates[0]!, { ok: true, values }, atMs);

describe("rolloutStrategy gates parsing (docs/semantics.md#partition-gates)", () => {
  it("parses a gate with its defaults filled in", () => {
    const [gate] = strategy(RAW).gates;
    expect(gate).toEqual({
      type: "Metric",
      name: "errors",
      query: GATE.query,
      successCondition: "result[0] < 0.01",
      intervalSeconds: 10,
      count: 1,
      failureLimit: 0,
      inconclusiveLimit: 0,
    });
  });

  it("names an unnamed gate after its index and keeps afterPartitions", () => {
    const [gate] = strategy({
      ...RAW,
      gates: [{ ...GATE, name: undefined, afterPartitions: ["canary"] }],
    }).gates;
    expect(gate?.name).toBe("gate-0");
    expect(gate?.afterPartitions).toEqual(["canary"]);
  });

  it("refuses a gate that is not a metric gate, naming the field", () => {
    expect(problemsOf({ gates: [{ type: "Approval" }] })).toEqual([
      {
        path: "rolloutStrategy.gates[0].type",
        message:
          'must be "Metric" (the gates between partitions are metric gates)',
      },
    ]);
  });

  it("refuses an unknown key, a bad condition and a staged-run placeholder", () => {
    const paths = problemsOf({
      gates: [
        {
          ...GATE,
          query: "up{stage=~'{{stage}}'}",
          successCondition: "result[0] <",
          bogus: 1,
        },
      ],
    }).map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "rolloutStrategy.gates[0].query",
        "rolloutStrategy.gates[0].successCondition",
        "rolloutStrategy.gates[0].bogus",
      ]),
    );
  });

  it("refuses a gate without a condition", () => {
    expect(problemsOf({ gates: [{ type: "Metric", query: "up" }] })).toEqual([
      {
        path: "rolloutStrategy.gates[0].successCondition",
        message:
          "a metric gate needs a successCondition, a failureCondition or both",
      },
    ]);
  });

  it("refuses afterPartitions naming no manual partition, and duplicate names", () => {
    const problems = problemsOf({
      ...RAW,
      gates: [GATE, { ...GATE, afterPartitions: ["canry"] }],
    });
    expect(problems).toEqual([
      {
        path: "rolloutStrategy.gates[1].name",
        message:
          "duplicate gate name; first defined at rolloutStrategy.gates[0]",
      },
      {
        path: "rolloutStrategy.gates[1].afterPartitions[0]",
        message: 'names no partition (partitions: "canary", "rest")',
      },
    ]);
  });

  it("fills the placeholders of a partition's query", () => {
    expect(
      fillGateQuery(
        "x{c=~'{{clusters}}',p='{{partition}}',b='{{ bundle }}',r='{{revision}}'}",
        {
          partition: "canary",
          clusters: ["b", "a"],
          bundle: "web",
          revision: "r1",
        },
      ),
    ).toBe("x{c=~'a|b',p='canary',b='web',r='r1'}");
  });
});

describe("a pass with partition gates (docs/semantics.md#partition-gates)", () => {
  it("holds the next partition while the gate measures, and asks for the measurement", () => {
    const result = pass();
    expect(result.release).toEqual([]);
    expect(result.stoppedAfter).toBe("canary");
    expect(result.held.map((h) => [h.cluster, h.reason])).toEqual([
      ["c", "GateNotPassed"],
      ["d", "GateNotPassed"],
    ]);
    expect(result.gateMeasurements).toEqual([
      expect.objectContaining({
        gate: "errors",
        partition: "canary",
        verdict: "Measuring",
        query: 'sum(rate(errors{cluster=~"a|b",bundle="web"}[1m]))',
      }),
    ]);
  });

  it("does not measure before the partition is Ready at the revision", () => {
    const result = pass(
      {},
      {
        deployments: new Map([
          ["a", readyAt("rev-2")],
          ["b", notReadyAt("rev-2")],
          ...allReady(["c", "d"], "rev-1"),
        ]),
      },
    );
    expect(result.gateMeasurements).toEqual([]);
    expect(result.partitions[0]?.gates?.[0]?.verdict).toBe("Waiting");
    expect(result.held.map((h) => h.reason)).toEqual([
      "GateNotPassed",
      "GateNotPassed",
    ]);
  });

  it("releases the next partition once the gate passed", () => {
    const result = pass({
      "canary/errors": { measurements: [measured([0.001], NOW - 1)] },
    });
    expect(result.partitions[0]?.gates?.[0]?.verdict).toBe("Passed");
    expect(result.release.map((r) => r.cluster)).toEqual(["c", "d"]);
    expect(result.gateFailed).toBeUndefined();
  });

  it("halts on a failed gate with the gate and its last measurement in the hold", () => {
    const result = pass({
      "canary/errors": { measurements: [measured([0.5], NOW - 1)] },
    });
    expect(result.release).toEqual([]);
    expect(result.gateFailed).toEqual({
      partition: "canary",
      gate: "errors",
      message: expect.stringContaining(
        'gate "errors" after partition "canary" failed',
      ),
    });
    expect(result.held[0]?.reason).toBe("GateFailed");
    expect(result.held[0]?.message).toContain("result[0] < 0.01 is false");
  });

  it("waits an interval between measurements and says when the next is due", () => {
    const gate = strategy({ ...RAW, gates: [{ ...GATE, count: 3 }] }).gates[0]!;
    const m = judgeGateOutcome(gate, { ok: true, values: [0] }, NOW - 4_000);
    const result = pass(
      { "canary/errors": { measurements: [m] } },
      { strategy: strategy({ ...RAW, gates: [{ ...GATE, count: 3 }] }) },
    );
    expect(result.gateMeasurements).toEqual([]);
    expect(result.nextGateAtMs).toBe(NOW + 6_000);
    expect(result.held[0]?.message).toContain("1 of 3 measurement(s)");
  });

  it("treats an inconclusive gate as closed until approved, and an approval opens a failed one", () => {
    const inconclusive = judgeGateOutcome(
      strategy(RAW).gates[0]!,
      { ok: false, reason: "connection refused" },
      NOW - 1,
    );
    const waiting = pass({ "canary/errors": { measurements: [inconclusive] } });
    expect(waiting.partitions[0]?.gates?.[0]?.verdict).toBe("Inconclusive");
    expect(waiting.held[0]?.reason).toBe("GateNotPassed");
    expect(waiting.release).toEqual([]);

    const approved = pass({
      "canary/errors": {
        measurements: [measured([0.5], NOW - 1)],
        approvedBy: "alice",
      },
    });
    expect(approved.partitions[0]?.gates?.[0]?.verdict).toBe("Approved");
    expect(approved.gateFailed).toBeUndefined();
    expect(approved.release.map((r) => r.cluster)).toEqual(["c", "d"]);
  });

  it("measures no gate after the last partition by default", () => {
    const result = pass(
      {},
      { deployments: allReady(["a", "b", "c", "d"], "rev-2") },
    );
    expect(result.partitions[1]?.gates).toBeUndefined();
    expect(result.gateMeasurements.map((g) => g.partition)).toEqual(["canary"]);
  });

  it("measures only after the partitions afterPartitions names", () => {
    const result = pass(
      {},
      {
        strategy: strategy({
          ...RAW,
          gates: [{ ...GATE, afterPartitions: ["rest"] }],
        }),
      },
    );
    // No gate after the canary: the rest is released as without gates.
    expect(result.release.map((r) => r.cluster)).toEqual(["c", "d"]);
    expect(result.partitions[0]?.gates).toBeUndefined();
  });
});
