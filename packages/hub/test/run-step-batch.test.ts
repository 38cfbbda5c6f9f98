/**
 * The pure step of a run's batch: accepted entries are journaled with their transitions and the
 * members they start, a refused entry changes nothing (all its events are undone), and what was
 * refused or set aside is reported in order for the caller to log or answer.
 */
import {
  cloneRun,
  parseUpdateStrategy,
  resolveRun,
  type Cluster,
  type Run,
  type RunEvent,
} from "@flotilla/core";
import { describe, expect, it } from "vitest";
import type { Queued } from "../src/runs/mailbox.js";
import { stepBatch } from "../src/runs/step-batch.js";

const NOW = Date.parse("2026-12-01T10:00:00Z");

function newRun(): Run {
  const strategy = parseUpdateStrategy({
    stages: [
      {
        name: "prod",
        memberSelector: { byLabel: "env=prod" },
        maxConcurrency: 1,
      },
    ],
  });
  if (!strategy.ok) throw new Error(JSON.stringify(strategy.problems));
  const clusters: Cluster[] = ["prod-01", "prod-02", "prod-03"].map((name) => ({
    name,
    labels: { env: "prod" },
    groups: [],
    kubernetesVersion: "1.29.9",
    nodePools: [],
  }));
  const resolved = resolveRun({
    name: "up",
    strategy: strategy.value,
    clusters,
    payload: {
      kind: "upgrade",
      upgrade: {
        type: "Full",
        kubernetesVersion: "1.30.3",
        nodeImageSelection: "Latest",
      },
    },
    createdAtMs: NOW,
  });
  if (!resolved.ok) throw new Error(JSON.stringify(resolved.problems));
  return resolved.value;
}

const command = (...events: RunEvent[]): Queued<string> => ({
  events,
  resolve: () => undefined,
  reject: () => undefined,
});

const memberState = (run: Run, name: string): string | undefined =>
  run.stages
    .flatMap((s) => s.groups.flatMap((g) => g.members))
    .find((m) => m.name === name)?.state;

const START: RunEvent = { type: "StartRun", actor: "test" };

describe("stepBatch", () => {
  it("journals an accepted command, with its transitions and the member it starts", () => {
    const run = newRun();
    const started = command(START);
    const out = stepBatch(run, [started], NOW);
    expect(out.run).toBe(run);
    expect(out.run.state).toBe("Running");
    expect(out.accepted).toEqual([started]);
    expect(out.journal).toEqual([START]);
    expect(out.notes).toEqual([]);
    expect(out.transitions).toContainEqual(
      expect.objectContaining({ scope: "run", to: "Running" }),
    );
    expect(out.starts).toHaveLength(1);
    const [first] = out.starts;
    expect([...out.intents.keys()]).toEqual([first]);
    expect(out.intents.get(first ?? "")).toEqual([
      expect.objectContaining({
        type: "SetUpgrade",
        upgrade: expect.objectContaining({ run: "up", type: "Full" }),
      }),
    ]);
    expect(memberState(out.run, first ?? "")).toBe("Running");
  });

  it("leaves a refused entry out whole and reports it, after what the batch accepted", () => {
    const run = newRun();
    const started = command(START);
    const again = command(START);
    const out = stepBatch(run, [started, again], NOW);
    expect(out.accepted).toEqual([started]);
    expect(out.journal).toEqual([START]);
    expect(out.notes).toHaveLength(1);
    const [note] = out.notes;
    expect(note?.type).toBe("refused");
    if (note?.type !== "refused") return;
    expect(note.item).toBe(again);
    expect(note.error.code).toBe("failed_precondition");
  });

  it("undoes every event of an entry when one of them is refused", () => {
    const run = newRun();
    stepBatch(run, [command(START)], NOW);
    const before = cloneRun(run);
    const skipThenFail = command(
      { type: "SkipMember", member: "prod-03", actor: "test" },
      { type: "StartRun", actor: "test" },
    );
    const out = stepBatch(run, [skipThenFail], NOW);
    expect(out.accepted).toEqual([]);
    expect(out.journal).toEqual([]);
    expect(out.transitions).toEqual([]);
    expect(out.starts).toEqual([]);
    expect(out.intents.size).toBe(0);
    expect(out.notes.map((n) => n.type)).toEqual(["refused"]);
    expect(out.run).not.toBe(run);
    expect(out.run).toEqual(before);
    expect(memberState(out.run, "prod-03")).toBe("NotStarted");
  });

  it("keeps core's intent changes in the order of the entries: a member started, then failed, ends without the upgrade", () => {
    const run = newRun();
    const out = stepBatch(
      run,
      [
        command(START),
        command({ type: "MemberFailed", member: "prod-01", error: "boom" }),
      ],
      NOW,
    );
    expect(out.accepted).toHaveLength(2);
    expect(out.intents.get("prod-01")?.map((c) => c.type)).toEqual([
      "SetUpgrade",
      "ClearUpgrade",
    ]);
  });

  it("accepts nothing from an empty batch", () => {
    const run = newRun();
    const out = stepBatch(run, [], NOW);
    expect(out).toEqual({
      run,
      accepted: [],
      journal: [],
      transitions: [],
      starts: [],
      measures: [],
      intents: new Map(),
      releases: [],
      notes: [],
    });
  });
});
