/**
 * Run handling as `az fleet` users expect, with real processes (nats-server, the hub, simulated
 * agents in their own process, the flotilla CLI): a run created with az's option names and global
 * options before the command words, its approval gate found with `gate list` and approved with
 * `gate approve` without naming the run, targets skipped with `run skip --targets`, and `run
 * delete` refused while a run is in flight and accepted once it has finished or stopped.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

let e2e: E2E;
let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-run-handling-"));
  e2e = await startE2E();
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("canary-", 2, { env: "canary", geo: "eu" }),
      clusters("prod-eu-", 3, { env: "prod", geo: "eu" }),
      clusters("prod-us-", 3, { env: "prod", geo: "us" }),
    ]),
  );
  await e2e.connected(8);
});

afterEach(async () => {
  await e2e.stop();
  await rm(work, { recursive: true, force: true });
});

interface GateRow {
  run: string;
  gate: { id: string; state: string };
}

describe("run handling as az fleet users expect", () => {
  it("creates with az names, approves a gate found across runs, skips --targets, deletes only when not in flight", async () => {
    const strategy = join(work, "strategy.json");
    await writeFile(
      strategy,
      JSON.stringify({
        stages: [
          {
            name: "canary",
            memberSelector: { byLabel: "env=canary" },
            maxConcurrency: 1,
            afterGates: [{ type: "Approval", displayName: "canary ok" }],
          },
          {
            name: "prod",
            groups: [
              { name: "eu", memberSelector: { byLabel: "env=prod,geo=eu" } },
              { name: "us", memberSelector: { byLabel: "env=prod,geo=us" } },
            ],
          },
        ],
      }),
    );
    await e2e.ok("strategy", "create", "rings", "-f", strategy);

    // The global --hub before the noun is the one used: a closed port cannot be reached.
    const unreachable = await e2e.cli("--hub", "127.0.0.1:1", "run", "list");
    expect(unreachable.code, unreachable.stderr).toBe(3);

    await e2e.ok(
      "--hub",
      e2e.hubAddress,
      "run",
      "create",
      "up",
      "--update-strategy-name",
      "rings",
      "--upgrade-type",
      "Full",
      "--kubernetes-version",
      "1.30.3",
    );
    // A second run of the same strategy: its gate has the same id, but does not wait.
    await e2e.ok(
      "run",
      "create",
      "spare",
      "--update-strategy-name",
      "rings",
      "--upgrade-type",
      "ControlPlaneOnly",
      "--kubernetes-version",
      "1.30.3",
    );
    const up = await e2e.run("up");
    expect(up.payload).toMatchObject({
      kind: "upgrade",
      upgrade: { type: "Full", kubernetesVersion: "1.30.3" },
    });
    expect((await e2e.run("spare")).payload).toMatchObject({
      upgrade: { type: "ControlPlaneOnly" },
    });

    await e2e.ok("run", "start", "up");
    const inFlight = await e2e.cli("run", "delete", "up");
    expect(inFlight.code).toBe(1);
    expect(inFlight.stderr).toMatch(/"up" is (Running|Pending): stop it/);

    const listed = await waitFor(
      async () => {
        const out = await e2e.ok(
          "gate",
          "-o",
          "json",
          "list",
          "--state",
          "Pending",
        );
        const { gates } = JSON.parse(out) as { gates: GateRow[] };
        return gates.length > 0 ? gates : undefined;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 300,
        message: "the canary gate to be Pending",
      },
    );
    expect(listed.map((g) => [g.run, g.gate.id])).toEqual([
      ["up", "stage:canary:after"],
    ]);
    const table = await e2e.ok("gate", "list", "--run", "up");
    expect(table).toMatch(
      /up +stage:canary:after +canary ok +Approval +after stage canary +Pending/,
    );
    const atGate = await e2e.cli("run", "delete", "up");
    expect(atGate.code).toBe(1);
    expect(atGate.stderr).toContain('"up" is Pending');

    const eu = (await e2e.run("up")).stages[1]?.groups[0]?.members.map(
      (m) => m.name,
    );
    const [skipped, ...others] = eu ?? [];
    expect(others).toHaveLength(2);
    await e2e.ok(
      "run",
      "skip",
      "up",
      "--targets",
      `Group:us,Member:${skipped ?? ""}`,
    );
    await e2e.ok(
      "gate",
      "approve",
      "stage:canary:after",
      "--reason",
      "canaries ok",
    );
    await waitFor(async () => (await e2e.run("up")).state === "Completed", {
      timeoutMs: 60_000,
      intervalMs: 300,
      message: "run up to complete",
    });
    const done = await e2e.run("up");
    const states = (stage: number, group: number): string[] =>
      done.stages[stage]?.groups[group]?.members.map(
        (m) => `${m.name} ${m.state}`,
      ) ?? [];
    expect(states(0, 0).every((m) => m.endsWith(" Succeeded"))).toBe(true);
    expect(states(1, 0)).toEqual([
      `${skipped ?? ""} Skipped`,
      ...others.map((m) => `${m} Succeeded`),
    ]);
    expect(states(1, 1)).toHaveLength(3);
    expect(states(1, 1).every((m) => m.endsWith(" Skipped"))).toBe(true);
    expect((await e2e.run("spare")).stages[0]?.afterGates[0]?.state).toBe(
      "NotStarted",
    );

    // Finished: deleted, and gone from the list; the run that never started too.
    expect(await e2e.ok("run", "delete", "up", "--reason", "done")).toBe(
      "Run up deleted (it was Completed).\n",
    );
    expect(await e2e.ok("run", "delete", "spare")).toBe(
      "Run spare deleted (it was NotStarted).\n",
    );
    const { runs } = JSON.parse(await e2e.ok("run", "list", "-o", "json")) as {
      runs: { name: string }[];
    };
    expect(runs).toEqual([]);
    const gone = await e2e.cli("run", "status", "up");
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("does not exist");

    // Stopped: in flight first (refused), deleted once stopped.
    await e2e.ok(
      "run",
      "create",
      "halt",
      "--strategy",
      "rings",
      "--kubernetes-version",
      "1.31.0",
    );
    await e2e.ok("run", "start", "halt");
    const running = await e2e.cli("run", "delete", "halt");
    expect(running.code).toBe(1);
    expect(running.stderr).toMatch(/"halt" is (Running|Pending): stop it/);
    await e2e.ok("run", "stop", "halt");
    await waitFor(async () => (await e2e.run("halt")).state === "Stopped", {
      timeoutMs: 30_000,
      intervalMs: 300,
      message: "run halt to stop",
    });
    expect(await e2e.ok("run", "delete", "halt")).toBe(
      "Run halt deleted (it was Stopped).\n",
    );

    const audit = JSON.parse(
      await e2e.ok(
        "audit",
        "list",
        "--method",
        "DeleteUpdateRun",
        "-o",
        "json",
      ),
    ) as { events: { targetName: string; outcome: string }[] };
    expect(audit.events.map((e) => [e.targetName, e.outcome])).toEqual([
      ["up", "AUDIT_OUTCOME_FAILED"],
      ["up", "AUDIT_OUTCOME_FAILED"],
      ["up", "AUDIT_OUTCOME_SUCCEEDED"],
      ["spare", "AUDIT_OUTCOME_SUCCEEDED"],
      ["halt", "AUDIT_OUTCOME_FAILED"],
      ["halt", "AUDIT_OUTCOME_SUCCEEDED"],
    ]);
    // About 25 CLI processes in a row: more than the default timeout on a busy machine.
  }, 120_000);
});
