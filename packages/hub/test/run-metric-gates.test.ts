// The run manager measuring metric gates (docs/engine.md#metric-gates): it asks the gate's query
// once the batch that reached it is stored, again every interval on its tick, and the answers
// decide the gate; a hub that cannot measure refuses such runs; every measurement is audited.
import { describe, expect, it } from "vitest";
import {
  parseUpdateStrategy,
  type QueryOutcome,
  type UpdateStrategy,
} from "@flotilla/core";
import pino from "pino";
import type { AuditRecord } from "../src/audit/audit-log.js";
import { createIntentWriter } from "../src/intents/intent-writer.js";
import { createMemoryIntentPublisher } from "../src/intents/memory-intent-publisher.js";
import {
  createGateMeasurer,
  MEASURE_GATE_METHOD,
} from "../src/runs/gate-measurements.js";
import { createRunManager } from "../src/runs/run-manager.js";
import type { MeasureGate } from "../src/runs/step-batch.js";
import { createMemoryStore } from "../src/store/memory-store.js";
import { NOW, prodDirectory } from "./run-manager-fixture.js";

function gated(extra: Record<string, unknown> = {}): UpdateStrategy {
  const parsed = parseUpdateStrategy({
    stages: [
      {
        name: "prod",
        memberSelector: { byLabel: "env=prod" },
        maxConcurrency: 1,
        beforeGates: [
          {
            type: "Metric",
            displayName: "error rate",
            query: 'rate(errors{cluster=~"{{clusters}}"}[5m])',
            successCondition: "max(result) < 0.01",
            interval: "30s",
            count: 2,
            ...extra,
          },
        ],
      },
    ],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

const UPGRADE = {
  kind: "upgrade" as const,
  upgrade: {
    type: "Full" as const,
    kubernetesVersion: "1.30.3",
    nodeImageSelection: "Latest" as const,
  },
};

async function setup(answers: QueryOutcome[]) {
  const store = createMemoryStore();
  await store.start();
  const publisher = createMemoryIntentPublisher();
  await publisher.start();
  const clock = { nowMs: NOW };
  const asked: MeasureGate[] = [];
  const runs = createRunManager({
    store,
    intents: createIntentWriter(publisher),
    directory: prodDirectory(),
    now: () => clock.nowMs,
    logger: pino({ level: "silent" }),
    measureGate: (_run, action) => {
      asked.push(action);
      return Promise.resolve(
        answers.shift() ?? { ok: false, reason: "no answer scripted" },
      );
    },
  });
  await runs.start();
  /** Waits until the answers asked for are back in the run. */
  const settle = async () => {
    for (let i = 0; i < 10; i++) {
      await runs.idle();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const gate = () => runs.get("up").run.stages[0]?.beforeGates[0];
  return { store, publisher, clock, asked, runs, settle, gate };
}

describe("metric gates in the run manager", () => {
  it("measures when the gate is reached and every interval, and starts the stage once it passes", async () => {
    const s = await setup([
      { ok: true, values: [0.001, 0.004] },
      { ok: true, values: [0.002] },
    ]);
    await s.runs.create({ name: "up", strategy: gated(), payload: UPGRADE });
    await s.runs.command("up", { type: "StartRun", actor: "t", reason: "" });
    await s.settle();
    expect(s.asked).toEqual([
      {
        type: "MeasureGate",
        gate: "stage:prod:before",
        query: 'rate(errors{cluster=~"prod-01|prod-02|prod-03"}[5m])',
        stage: "prod",
      },
    ]);
    expect(s.gate()).toMatchObject({ state: "Pending" });
    expect(s.gate()?.metric?.measurements).toHaveLength(1);
    expect(
      s.publisher.snapshot().get("prod-01")?.intent.upgrade,
    ).toBeUndefined();
    // Nothing is asked before the interval.
    s.runs.tick();
    await s.settle();
    expect(s.asked).toHaveLength(1);
    s.clock.nowMs += 30_000;
    s.runs.tick();
    await s.settle();
    expect(s.asked).toHaveLength(2);
    expect(s.gate()).toMatchObject({
      state: "Completed",
      completedBy: "metric",
    });
    expect(s.publisher.snapshot().get("prod-01")?.intent.upgrade).toBeDefined();
  });

  it("fails the run when the measurements fail", async () => {
    const s = await setup([{ ok: true, values: [0.5] }]);
    await s.runs.create({ name: "up", strategy: gated(), payload: UPGRADE });
    await s.runs.command("up", { type: "StartRun", actor: "t", reason: "" });
    await s.settle();
    expect(s.gate()?.state).toBe("Failed");
    expect(s.runs.get("up").run).toMatchObject({
      state: "Failed",
      message: expect.stringContaining(
        "Metric gate stage:prod:before failed",
      ) as string,
    });
  });

  it("refuses a run with metric gates on a hub that cannot measure them, storing nothing", async () => {
    const store = createMemoryStore();
    await store.start();
    const runs = createRunManager({
      store,
      intents: createIntentWriter(createMemoryIntentPublisher()),
      directory: prodDirectory(),
      now: () => NOW,
      logger: pino({ level: "silent" }),
    });
    await runs.start();
    await expect(
      runs.create({ name: "up", strategy: gated(), payload: UPGRADE }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [
        {
          path: "strategy",
          message:
            "has metric gates (stage:prod:before), but this hub has no Prometheus to measure them: start it with --prometheus-url",
        },
      ],
    });
    expect(runs.list()).toEqual([]);
  });
});

describe("the gate measurer", () => {
  it("asks the source, records the answer in the audit log, and turns a thrown error into a reason", async () => {
    const records: AuditRecord[] = [];
    const answers: (QueryOutcome | Error)[] = [
      { ok: true, values: [0.25, Number.NaN] },
      new Error("connect ECONNREFUSED 127.0.0.1:9090"),
    ];
    const measure = createGateMeasurer({
      source: {
        query: () => {
          const next = answers.shift();
          return next instanceof Error
            ? Promise.reject(next)
            : Promise.resolve(next ?? { ok: true, values: [] });
        },
      },
      audit: {
        append: (r: AuditRecord) => {
          records.push(r);
          return Promise.resolve();
        },
      } as never,
      now: () => NOW,
      log: pino({ level: "silent" }),
      replica: () => "hub-a",
    });
    const action: MeasureGate = {
      type: "MeasureGate",
      gate: "stage:prod:before",
      query: "up",
      stage: "prod",
    };
    expect(await measure("up", action)).toEqual({
      ok: true,
      values: [0.25, Number.NaN],
    });
    expect(await measure("up", action)).toEqual({
      ok: false,
      reason: "connect ECONNREFUSED 127.0.0.1:9090",
    });
    expect(
      records.map((r) => [
        r.method,
        r.actor,
        r.targetName,
        r.reason,
        r.message,
      ]),
    ).toEqual([
      [
        MEASURE_GATE_METHOD,
        "hub/hub-a",
        "up",
        "gate stage:prod:before",
        "up → 0.25, NaN",
      ],
      [
        MEASURE_GATE_METHOD,
        "hub/hub-a",
        "up",
        "gate stage:prod:before",
        "up → no value: connect ECONNREFUSED 127.0.0.1:9090",
      ],
    ]);
  });
});
