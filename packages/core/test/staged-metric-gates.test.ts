/**
 * Metric gates in a staged run (docs/engine.md#metric-gates): a gate measured every interval with
 * its query's placeholders filled in, passing after `count` measurements, failing the run past
 * `failureLimit`, waiting for an approval past `inconclusiveLimit`; `simulate` rehearses it from
 * the scenario's values and `plan` shows it.
 */
import { describe, expect, it } from "vitest";
import type { RunAction } from "../src/staged/events.js";
import { parseUpdateStrategy } from "../src/update-strategy.js";
import { planStaged } from "../src/plan.js";
import {
  problemsOf,
  scopeChanges,
  simulated,
  upgradeScenario,
  when,
} from "./simulation-fixtures.js";
import {
  Driver,
  MINUTE,
  gate,
  groupOf,
  resolve,
  running,
  stage,
  strategy,
} from "./staged-fixtures.js";

const errorRate = (extra: Record<string, unknown> = {}) => ({
  type: "Metric",
  displayName: "error rate",
  query: 'sum(rate(errors{cluster=~"{{clusters}}",stage="{{stage}}"}[5m]))',
  successCondition: "result[0] < 0.01",
  failureCondition: "result[0] >= 0.05",
  interval: "1m",
  count: 2,
  ...extra,
});

const twoStages = (gateSpec: unknown) =>
  strategy({
    stages: [
      { name: "canary", groups: [{ name: "c" }], afterGates: [gateSpec] },
      { name: "prod", groups: [{ name: "p" }] },
    ],
  });

const fleet = () => [...groupOf("c", 2), ...groupOf("p", 2)];

function measures(actions: readonly RunAction[]) {
  return actions.filter((a) => a.type === "MeasureGate");
}

const value = (v: number) => ({ ok: true as const, values: [v] });

/** The run through the canary stage: its after-gate is reached and measured once. */
function atTheGate(gateSpec: unknown = errorRate()) {
  const run = resolve(twoStages(gateSpec), fleet());
  const d = new Driver(run);
  d.start();
  d.succeed("c-00", "c-01");
  return { run, d };
}

describe("a metric gate in a run", () => {
  it("measures at once with the placeholders filled in, again every interval, and passes after count measurements", () => {
    const { run, d } = atTheGate();
    const g = gate(run, "stage:canary:after");
    expect(g.state).toBe("Pending");
    expect(measures(d.actions)).toEqual([
      {
        type: "MeasureGate",
        gate: "stage:canary:after",
        query: 'sum(rate(errors{cluster=~"c-00|c-01",stage="canary"}[5m]))',
        stage: "canary",
      },
    ]);
    expect(run.wakeAtMs).toBe(d.now + MINUTE);
    d.ok({ type: "GateMeasured", gate: g.id, outcome: value(0.004) });
    expect(g.state).toBe("Pending");
    expect(g.message).toBe(
      "Measuring error rate: 1 of 2 measurement(s): Successful (successCondition result[0] < 0.01 is true)",
    );
    expect(running(run)).toEqual([]);
    // Nothing is due before the interval; at it, the next measurement is asked.
    d.tick();
    expect(measures(d.last?.actions ?? [])).toHaveLength(1);
    d.ok({ type: "GateMeasured", gate: g.id, outcome: value(0.002) });
    expect(g).toMatchObject({
      state: "Completed",
      completedBy: "metric",
      message: "Passed: 2 measurements within the limits",
    });
    expect(g.metric?.measurements.map((m) => m.values)).toEqual([
      [0.004],
      [0.002],
    ]);
    expect(running(run)).toEqual(["p-00"]);
    // A measurement that comes back after the gate decided is not counted.
    const late = d.send({
      type: "GateMeasured",
      gate: g.id,
      outcome: value(1),
    });
    expect(late.rejected?.message).toContain("is not measuring");
    expect(g.metric?.measurements).toHaveLength(2);
  });

  it("fails the run once failures exceed failureLimit; starting again measures afresh, approving overrides it", () => {
    const { run, d } = atTheGate();
    const g = gate(run, "stage:canary:after");
    d.ok({ type: "GateMeasured", gate: g.id, outcome: value(0.2) });
    expect(g.state).toBe("Failed");
    expect(run.state).toBe("Failed");
    expect(run.message).toBe(
      "Metric gate stage:canary:after failed: 1 failed measurement, more than failureLimit 0: failureCondition result[0] >= 0.05 is true",
    );
    expect(stage(run, "canary").state).toBe("Failed");
    expect(running(run)).toEqual([]);
    expect(run.wakeAtMs).toBeUndefined();

    d.start();
    expect(g.state).toBe("Pending");
    expect(g.metric?.measurements).toEqual([]);
    expect(measures(d.last?.actions ?? [])).toHaveLength(1);
    d.ok({ type: "GateMeasured", gate: g.id, outcome: value(0.3) });
    expect(run.state).toBe("Failed");

    d.ok({
      type: "ApproveGate",
      gate: g.id,
      actor: "ops",
      reason: "known noise",
    });
    expect(g).toMatchObject({ state: "Completed", completedBy: "ops" });
    d.start();
    expect(running(run)).toEqual(["p-00"]);
  });

  it("waits for an approval once inconclusive measurements exceed inconclusiveLimit; a failed query or NaN is inconclusive", () => {
    const { run, d } = atTheGate(errorRate({ inconclusiveLimit: 1 }));
    const g = gate(run, "stage:canary:after");
    d.ok({
      type: "GateMeasured",
      gate: g.id,
      outcome: { ok: false, reason: "Prometheus did not answer within 10s" },
    });
    expect(g.state).toBe("Pending");
    d.tick();
    d.ok({ type: "GateMeasured", gate: g.id, outcome: value(Number.NaN) });
    expect(g).toMatchObject({
      state: "Pending",
      message:
        "Inconclusive: 2 inconclusive measurements, more than inconclusiveLimit 1: failureCondition: result[0] is NaN; approve the gate to go on",
    });
    expect(g.metric?.verdict).toBe("Inconclusive");
    // No more measurements: the gate waits for a person.
    expect(run.wakeAtMs).toBeUndefined();
    d.ok({ type: "ApproveGate", gate: g.id, actor: "ops" });
    expect(g.state).toBe("Completed");
    expect(running(run)).toEqual(["p-00"]);
  });

  it("judges nothing by a stored condition that no longer reads: inconclusive, never a pass", () => {
    const { run, d } = atTheGate(errorRate({ inconclusiveLimit: 5 }));
    const g = gate(run, "stage:canary:after");
    // As a run stored by a version whose language read it differently.
    Object.assign(g.metric ?? {}, { successCondition: "result < 1" });
    d.ok({ type: "GateMeasured", gate: g.id, outcome: value(0.001) });
    expect(g.metric?.measurements.at(-1)).toMatchObject({
      verdict: "Inconclusive",
      message: expect.stringContaining(
        'successCondition result < 1: "result" at 0 is the list',
      ) as string,
    });
  });

  it("fills {{clusters}} with a group's members for a group's gate", () => {
    const run = resolve(
      strategy({
        stages: [
          {
            name: "s",
            groups: [
              {
                name: "c",
                beforeGates: [
                  errorRate({
                    query:
                      'up{cluster=~"{{clusters}}",g="{{group}}",r="{{run}}"}',
                  }),
                ],
              },
              { name: "p" },
            ],
          },
        ],
      }),
      fleet(),
    );
    const d = new Driver(run);
    d.start();
    expect(measures(d.actions)).toEqual([
      {
        type: "MeasureGate",
        gate: "group:c:before",
        query: 'up{cluster=~"c-00|c-01",g="c",r="run-1"}',
        stage: "s",
        group: "c",
      },
    ]);
    // The other group goes on meanwhile.
    expect(running(run)).toEqual(["p-00"]);
  });
});

describe("metric gates in a strategy", () => {
  const problems = (gateSpec: unknown) => {
    const parsed = parseUpdateStrategy({
      stages: [{ name: "s", groups: [{ name: "g" }], afterGates: [gateSpec] }],
    });
    return parsed.ok
      ? []
      : parsed.problems.map((p) => `${p.path}: ${p.message}`);
  };

  it("are refused with the field and the reason", () => {
    expect(problems(errorRate({ successCondition: "result < 1" }))).toEqual([
      expect.stringContaining(
        'stages[0].afterGates[0].successCondition: "result" at 0 is the list',
      ),
    ]);
    expect(
      problems(
        errorRate({ successCondition: undefined, failureCondition: undefined }),
      ),
    ).toEqual([
      "stages[0].afterGates[0].successCondition: a metric gate needs a successCondition, a failureCondition or both",
    ]);
    expect(problems(errorRate({ query: "up{x={{cluster}}}" }))).toEqual([
      'stages[0].afterGates[0].query: unknown placeholder "{{cluster}}" (known: {{clusters}}, {{stage}}, {{group}}, {{run}})',
    ]);
    expect(problems(errorRate({ interval: "60" }))).toEqual([
      'stages[0].afterGates[0].interval: needs a unit, e.g. "60s" or "60m"',
    ]);
    expect(problems(errorRate({ count: 0 }))).toEqual([
      "stages[0].afterGates[0].count: must be at least 1",
    ]);
    expect(problems(errorRate({ provider: "datadog" }))).toEqual([
      expect.stringContaining("stages[0].afterGates[0].provider"),
    ]);
    expect(problems(errorRate())).toEqual([]);
  });

  it("are shown by plan", () => {
    const planned = planStaged(twoStages(errorRate()), fleet());
    if (!planned.ok) throw new Error("plan failed");
    expect(planned.value.waves[0]?.gates).toEqual([
      {
        id: "stage:canary:after",
        type: "Metric",
        displayName: "error rate",
        metric: {
          query:
            'sum(rate(errors{cluster=~"{{clusters}}",stage="{{stage}}"}[5m]))',
          successCondition: "result[0] < 0.01",
          failureCondition: "result[0] >= 0.05",
          intervalSeconds: 60,
          count: 2,
          failureLimit: 0,
          inconclusiveLimit: 0,
        },
      },
    ]);
    expect(planned.value.waves[1]?.gates).toBeUndefined();
  });
});

describe("simulate with metric values", () => {
  const gated = {
    stages: [
      {
        name: "canary",
        groups: [{ name: "canary" }],
        afterGates: [errorRate()],
      },
      { name: "prod", groups: [{ name: "prod", maxConcurrency: "2" }] },
    ],
  };

  it("rehearses a gate that passes and one that fails from the scenario's values", () => {
    const passes = simulated(
      {
        ...upgradeScenario,
        metrics: { "stage:canary:after": [{ at: "+0m", value: 0.001 }] },
      },
      gated,
    );
    expect(scopeChanges(passes, "gate", "stage:canary:after")).toEqual([
      ["2026-03-02T10:10:00Z", "Pending"],
      ["2026-03-02T10:11:00Z", "Completed"],
    ]);
    expect(passes.finalState).toBe("Completed");

    const fails = simulated(
      {
        ...upgradeScenario,
        metrics: {
          "stage:canary:after": [
            { at: "+0m", value: 0.001 },
            { at: "+10m30s", value: 0.09 },
          ],
        },
      },
      gated,
    );
    expect(scopeChanges(fails, "gate", "stage:canary:after")).toEqual([
      ["2026-03-02T10:10:00Z", "Pending"],
      ["2026-03-02T10:11:00Z", "Failed"],
    ]);
    expect(fails.finalState).toBe("Failed");
    expect(when(fails, "started", "prod-1")).toBeUndefined();
  });

  it("without values for a gate, its measurements are inconclusive and it waits for an approval", () => {
    const out = simulated(
      {
        ...upgradeScenario,
        approvals: [{ gate: "stage:canary:after", at: "+1h" }],
      },
      gated,
    );
    expect(scopeChanges(out, "gate", "stage:canary:after")).toEqual([
      ["2026-03-02T10:10:00Z", "Pending"],
      ["2026-03-02T11:00:00Z", "Completed"],
    ]);
    expect(out.finalState).toBe("Completed");
  });

  it("refuses an entry that gives no value, and a gate id that is not one", () => {
    const paths = (metrics: unknown) =>
      problemsOf({ ...upgradeScenario, metrics }, gated).map(
        ([source, path, message]) => `${source} ${path}: ${message}`,
      );
    expect(paths({ "stage:canary:after": [{ at: "+0m" }] })).toEqual([
      "scenario metrics.stage:canary:after[0]: give exactly one of value, values or error",
    ]);
    expect(paths({ "canary-after": [{ at: "+0m", value: 1 }] })).toEqual([
      expect.stringContaining("scenario metrics.canary-after"),
    ]);
  });
});
