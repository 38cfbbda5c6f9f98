/**
 * `flotilla run status [--watch]` against a fake hub answering with runs made by core's engine: the
 * tree with a pending approval and a failed member (snapshot-style), folding of large groups, and
 * the watch following a snapshot and changes to the exit code the run's end calls for.
 */
import { runToWire, type wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { run as runCli } from "../src/main.js";
import { cliAgainst, startFakeHub, until } from "./fake-hub.js";
import { memoryIo } from "./fixtures.js";
import {
  advance,
  changeOf,
  CREATED_MS,
  MINUTE,
  newRun,
  runAtApproval,
  snapshotOf,
} from "./run-fixtures.js";

/** What `flotilla run status upgrade-1-31` prints for {@link runAtApproval} (no colour, 80 columns). */
const STATUS_AT_APPROVAL = `Run upgrade-1-31  upgrade to Kubernetes 1.31.2 (control plane and nodes, node images Latest)
created 2026-03-02T09:30:00Z · started 2026-03-02T09:31:00Z · progress deadline 1h per member
├─ stage canary ◀  Pending · [█████░░░░░] 1/2 · failures 1 (no limit of its own)
│  ├─ group canary  Completed · [█████░░░░░] 1/2 · 1 Failed · failures 1/1
│  │  │             maxConcurrency 2
│  │  ├─ canary-1  Succeeded
│  │  └─ canary-2  Failed  kubelet did not come back
│  └─ gate stage:canary:after  Approval "Canary looks good"  Pending
│     waiting since 2026-03-02T09:36:00Z; to approve:
│     → flotilla run approve upgrade-1-31 stage:canary:after
└─ stage prod  NotStarted · [░░░░░░░░░░] 0/2 · failures 0/0 (fail-fast)
   └─ group prod  NotStarted · [░░░░░░░░░░] 0/2 · maxConcurrency 2
      ├─ prod-1  NotStarted
      └─ prod-2  NotStarted
State: Pending · 1 failure · stage canary (1 of 2) · Stage "canary": Waiting for approval "Canary looks good" (stage:canary:after)

Next:
  flotilla run approve upgrade-1-31 stage:canary:after
`;

describe("flotilla run status", () => {
  it("draws stages, groups and members with the pending gate's command and the failed member", async () => {
    await using hub = await startFakeHub({
      unary: { GetUpdateRun: () => ({ run: runToWire(runAtApproval(), 3) }) },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "run",
      "status",
      "upgrade-1-31",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe(STATUS_AT_APPROVAL);
    expect(hub.requests("GetUpdateRun")).toEqual([{ name: "upgrade-1-31" }]);
  });

  it("names the hub replica driving the run under the header", async () => {
    await using hub = await startFakeHub({
      unary: {
        GetUpdateRun: () => ({
          run: runToWire(runAtApproval(), 3),
          ownerReplica: "hub-1",
        }),
      },
    });
    const { code, out } = await cliAgainst(hub, [
      "run",
      "status",
      "upgrade-1-31",
    ]);
    expect(code).toBe(0);
    const lines = STATUS_AT_APPROVAL.split("\n");
    expect(out).toBe(
      [
        ...lines.slice(0, 2),
        "Driven by hub replica hub-1",
        ...lines.slice(2),
      ].join("\n"),
    );
  });

  it("says which auto-upgrade profile made the run, with its channel and target", async () => {
    const origin = {
      profile: "rapid",
      channel: "Rapid",
      target: "1.31.2",
      createdBy: "hub",
    } as const;
    await using hub = await startFakeHub({
      unary: {
        GetUpdateRun: () => ({
          run: runToWire({ ...runAtApproval(), origin }, 3),
        }),
      },
    });
    const { code, out } = await cliAgainst(hub, [
      "run",
      "status",
      "upgrade-1-31",
    ]);
    expect(code).toBe(0);
    const lines = STATUS_AT_APPROVAL.split("\n");
    expect(out).toBe(
      [
        ...lines.slice(0, 2),
        "Created by auto-upgrade profile rapid (channel Rapid, target 1.31.2)",
        ...lines.slice(2),
      ].join("\n"),
    );
  });

  it("folds a group of more than 20 members into counts per state unless --members", async () => {
    const names = Array.from(
      { length: 25 },
      (_, i) => `c-${String(i + 1).padStart(2, "0")}`,
    );
    const wideRun = runToWire(newRun(), 1);
    const group = wideRun.stages?.[1]?.groups?.[0];
    if (group === undefined) throw new Error("fixture has no prod group");
    group.members = names.map((name, i) => ({
      name,
      state: i < 3 ? "MEMBER_STATE_FAILED" : "MEMBER_STATE_NOT_STARTED",
      stateChangedAtMs: CREATED_MS,
      failureCount: i < 3 ? 1 : 0,
    }));
    await using hub = await startFakeHub({
      unary: { GetUpdateRun: () => ({ run: wideRun }) },
    });
    const folded = await cliAgainst(hub, ["run", "status", "upgrade-1-31"]);
    expect(folded.out).toContain(
      "25 members: 3 Failed · 22 NotStarted (--members lists them)",
    );
    expect(folded.out).toContain("Failed: c-01, c-02, c-03");
    expect(folded.out).not.toContain("c-04");
    const all = await cliAgainst(hub, [
      "run",
      "status",
      "upgrade-1-31",
      "--members",
    ]);
    expect(all.out).toContain("├─ c-04  NotStarted");
  });

  it("prints the hub's run as JSON with -o json", async () => {
    await using hub = await startFakeHub({
      unary: { GetUpdateRun: () => ({ run: runToWire(runAtApproval(), 3) }) },
    });
    const { code, out } = await cliAgainst(hub, [
      "run",
      "status",
      "upgrade-1-31",
      "-o",
      "json",
    ]);
    expect(code).toBe(0);
    const parsed = JSON.parse(out) as {
      run: { state: string; stages: unknown[] };
    };
    expect(parsed.run.state).toBe("RUN_STATE_PENDING");
    expect(parsed.run.stages).toHaveLength(2);
    expect(out).not.toContain('"_');
  });
});

/** A fake WatchUpdateRun that sends `messages` in order, then ends the stream. */
function watchSending(
  messages: readonly wire.WatchUpdateRunResponse[],
): wire.AdminServiceHandlers["WatchUpdateRun"] {
  return (call) => {
    for (const message of messages) call.write(message);
    call.end();
  };
}

describe("flotilla run status --watch", () => {
  it("prints the snapshot, then one line per transition, and exits 0 when the run Completes", async () => {
    const run = runAtApproval();
    const messages = [snapshotOf(run)];
    const at = CREATED_MS + 40 * MINUTE;
    messages.push(
      changeOf(
        run,
        advance(run, [
          [
            { type: "ApproveGate", gate: "stage:canary:after", actor: "bob" },
            at,
          ],
        ]),
      ),
    );
    messages.push(
      changeOf(
        run,
        advance(run, [
          [{ type: "MemberSucceeded", member: "prod-1" }, at + 5 * MINUTE],
        ]),
      ),
    );
    messages.push(
      changeOf(
        run,
        advance(run, [
          [{ type: "MemberSucceeded", member: "prod-2" }, at + 6 * MINUTE],
        ]),
      ),
    );
    expect(run.state).toBe("Completed");
    await using hub = await startFakeHub({
      streams: { WatchUpdateRun: watchSending(messages) },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "run",
      "status",
      "upgrade-1-31",
      "--watch",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out.startsWith(STATUS_AT_APPROVAL)).toBe(true);
    const after = out.slice(STATUS_AT_APPROVAL.length).split("\n");
    expect(after).toContain(
      "2026-03-02T10:10:00Z  gate stage:canary:after (canary)  Pending → Completed · Approved by bob at 2026-03-02T10:10:00Z",
    );
    expect(after).toContain(
      "2026-03-02T10:15:00Z  member prod-1 (prod)  Running → Succeeded",
    );
    expect(after).toContain(
      "2026-03-02T10:10:00Z  member prod-2 (prod)  NotStarted → Running · Started",
    );
    expect(after.at(-2)).toBe(
      "State: Completed · 1 failure · Completed with 1 failed member(s)",
    );
  });

  it("exits 1 when the run ends Failed", async () => {
    const run = newRun();
    const messages = [snapshotOf(run)];
    messages.push(
      changeOf(
        run,
        advance(run, [[{ type: "StartRun" }, CREATED_MS + MINUTE]]),
      ),
    );
    messages.push(
      changeOf(
        run,
        advance(run, [
          [
            { type: "MemberFailed", member: "canary-1", error: "boom" },
            CREATED_MS + 2 * MINUTE,
          ],
          [
            { type: "MemberFailed", member: "canary-2", error: "boom" },
            CREATED_MS + 3 * MINUTE,
          ],
        ]),
      ),
    );
    expect(run.state).toBe("Failed");
    await using hub = await startFakeHub({
      streams: { WatchUpdateRun: watchSending(messages) },
    });
    const { code, out } = await cliAgainst(hub, [
      "run",
      "status",
      "upgrade-1-31",
      "--watch",
    ]);
    expect(code).toBe(1);
    expect(out).toMatch(/State: Failed · 2 failures/);
  });

  it("redraws the whole tree in place on a terminal", async () => {
    const run = runAtApproval();
    const messages = [snapshotOf(run)];
    messages.push(
      changeOf(
        run,
        advance(run, [
          [
            { type: "ApproveGate", gate: "stage:canary:after" },
            CREATED_MS + 40 * MINUTE,
          ],
          [
            { type: "MemberSucceeded", member: "prod-1" },
            CREATED_MS + 45 * MINUTE,
          ],
          [
            { type: "MemberSucceeded", member: "prod-2" },
            CREATED_MS + 46 * MINUTE,
          ],
        ]),
      ),
    );
    await using hub = await startFakeHub({
      streams: { WatchUpdateRun: watchSending(messages) },
    });
    const io = memoryIo(
      {},
      { isTTY: true, columns: 100, env: { NO_COLOR: "1" } },
    );
    const { code, out } = await cliAgainst(
      hub,
      ["run", "status", "upgrade-1-31", "-w"],
      io,
    );
    expect(code).toBe(0);
    const frames = out.split("\u001b[H\u001b[2J").filter((f) => f !== "");
    expect(frames).toHaveLength(2);
    expect(frames[0]).toContain("State: Pending");
    expect(frames[1]).toContain("└─ prod-2  Succeeded");
    expect(frames[1]).toContain("State: Completed · 1 failure ·");
    expect(frames[1]).not.toContain("Next:");
  });

  it("exits 3 naming the hub when it goes away mid-watch", async () => {
    const run = runAtApproval();
    await using hub = await startFakeHub({
      streams: {
        WatchUpdateRun: (call) => {
          call.write(snapshotOf(run));
        },
      },
    });
    const io = memoryIo();
    const exit = runCli(
      [
        "run",
        "status",
        "upgrade-1-31",
        "--watch",
        "--hub",
        hub.address,
        "--insecure-plaintext",
      ],
      io,
    );
    await until(() => io.out().includes("State: Pending"));
    hub.kill();
    expect(await exit).toBe(3);
    expect(io.err()).toContain(
      `flotilla: lost the hub at ${hub.address} while watching run upgrade-1-31`,
    );
  });
});
