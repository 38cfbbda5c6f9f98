/**
 * Run handling as `az fleet` users expect, against a fake hub: the az option names of `run
 * create`, `run skip --targets`, `run delete`, `gate list|approve` across runs, and the global
 * options before the command words as well as after.
 */
import { FlotillaError } from "@flotilla/core";
import { runToWire, runSummaryToWire, type wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { memoryIo, NOW_MS } from "./fixtures.js";
import { newRun, runAtApproval } from "./run-fixtures.js";
import { runCli } from "./support/run-cli.js";

const created = (): wire.CreateUpdateRunResponse => ({
  run: runToWire(newRun(), 1),
  warnings: [],
});

describe("flotilla run create with az fleet's option names", () => {
  it.each([
    [
      ["--upgrade-type", "Full", "--kubernetes-version", "1.31.2"],
      { type: "UPGRADE_TYPE_FULL", kubernetesVersion: "1.31.2" },
    ],
    [
      ["--upgrade-type", "ControlPlaneOnly", "--kubernetes-version", "1.31.2"],
      { type: "UPGRADE_TYPE_CONTROL_PLANE_ONLY", kubernetesVersion: "1.31.2" },
    ],
    [
      [
        "--upgrade-type",
        "NodeImageOnly",
        "--node-image-selection",
        "Consistent",
      ],
      {
        type: "UPGRADE_TYPE_NODE_IMAGE_ONLY",
        nodeImageSelection: "NODE_IMAGE_SELECTION_CONSISTENT",
      },
    ],
    [
      ["--upgrade-type", "NodeImageOnly", "--node-image-only"],
      { type: "UPGRADE_TYPE_NODE_IMAGE_ONLY" },
    ],
  ])(
    "%j sends the same request as the flotilla flags",
    async (flags, upgrade) => {
      await using hub = await startFakeHub({
        unary: { CreateUpdateRun: created },
      });
      const { code, err } = await cliAgainst(hub, [
        "run",
        "create",
        "r1",
        "--update-strategy-name",
        "canary-first",
        ...flags,
      ]);
      expect(err).toBe("");
      expect(code).toBe(0);
      expect(hub.requests("CreateUpdateRun")[0]).toMatchObject({
        name: "r1",
        strategyName: "canary-first",
        payload: { upgrade },
      });
    },
  );

  it.each([
    [
      ["--strategy", "a", "--update-strategy-name", "b"],
      '--update-strategy-name "b" and --strategy "a" disagree',
    ],
    [
      ["--strategy", "a", "--upgrade-type", "Full", "--node-image-only"],
      "--upgrade-type Full contradicts --node-image-only",
    ],
    [
      [
        "--strategy",
        "a",
        "--upgrade-type",
        "NodeImageOnly",
        "--control-plane-only",
      ],
      "--upgrade-type NodeImageOnly contradicts --control-plane-only",
    ],
    [
      ["--strategy", "a", "--upgrade-type", "Full"],
      "--upgrade-type Full needs --kubernetes-version V",
    ],
    [
      ["--strategy", "a", "--upgrade-type", "Partial"],
      'option "--upgrade-type" must be one of Full, ControlPlaneOnly, NodeImageOnly (got "Partial")',
    ],
  ])("%j is refused before the hub is asked", async (flags, message) => {
    await using hub = await startFakeHub({
      unary: { CreateUpdateRun: created },
    });
    const { code, err } = await cliAgainst(hub, [
      "run",
      "create",
      "r1",
      ...flags,
    ]);
    expect(code).toBe(2);
    expect(err).toContain(message);
    expect(hub.calls).toEqual([]);
  });

  it("accepts an alias given with the same value as its flag", async () => {
    await using hub = await startFakeHub({
      unary: { CreateUpdateRun: created },
    });
    const { code } = await cliAgainst(hub, [
      "run",
      "create",
      "r1",
      "--strategy",
      "a",
      "--update-strategy-name",
      "a",
      "--kubernetes-version",
      "1.31.2",
    ]);
    expect(code).toBe(0);
    expect(hub.requests("CreateUpdateRun")[0]).toMatchObject({
      strategyName: "a",
    });
  });
});

describe("flotilla run skip --targets", () => {
  const answer = (): wire.SkipUpdateRunTargetsResponse => ({
    run: runToWire(runAtApproval(), 3),
  });

  it("sends every TYPE:NAME pair with the --stage/--group/--member ones", async () => {
    await using hub = await startFakeHub({
      unary: { SkipUpdateRunTargets: answer },
    });
    const { code, err, out } = await cliAgainst(hub, [
      "run",
      "skip",
      "r1",
      "--targets",
      "Group:g1,Member:m1,Stage:s1",
      "--targets",
      "Member:m2",
      "--stage",
      "s2",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(hub.requests("SkipUpdateRunTargets")).toEqual([
      {
        name: "r1",
        stages: ["s2", "s1"],
        groups: ["g1"],
        members: ["m1", "m2"],
        reason: "",
      },
    ]);
    expect(out).toContain("skipped stage s2, stage s1, group g1, member m1");
  });

  it.each([
    [
      "AfterStageWait:canary",
      '--targets "AfterStageWait:canary": skipping an after-stage wait is not supported',
    ],
    [
      "Group:g,Cluster:c",
      '--targets "Cluster:c": must be TYPE:NAME with TYPE one of Stage, Group, Member',
    ],
    ["Member:", '--targets "Member:": needs the name of the member'],
    ["prod", '--targets "prod": must be TYPE:NAME'],
  ])("refuses %s naming the flag and the value", async (value, message) => {
    await using hub = await startFakeHub({
      unary: { SkipUpdateRunTargets: answer },
    });
    const { code, err } = await cliAgainst(hub, [
      "run",
      "skip",
      "r1",
      "--targets",
      value,
    ]);
    expect(code).toBe(2);
    expect(err).toContain(`flotilla: run skip: ${message}`);
    expect(hub.calls).toEqual([]);
  });
});

describe("flotilla run delete", () => {
  it("sends the name and reason and says what state the run was in", async () => {
    await using hub = await startFakeHub({
      unary: {
        DeleteUpdateRun: () => ({ state: "RUN_STATE_STOPPED" }),
      },
    });
    const { code, out } = await cliAgainst(hub, [
      "run",
      "delete",
      "r1",
      "--reason",
      "abandoned",
    ]);
    expect(code).toBe(0);
    expect(hub.requests("DeleteUpdateRun")).toEqual([
      { name: "r1", reason: "abandoned" },
    ]);
    expect(out).toBe("Run r1 deleted (it was Stopped).\n");
  });

  it("prints the hub's refusal of a running run and exits 1", async () => {
    await using hub = await startFakeHub({
      unary: {
        DeleteUpdateRun: () => {
          throw new FlotillaError(
            "failed_precondition",
            'Update run "r1" is Running: stop it (flotilla run stop) and wait until it is Stopped before deleting it',
          );
        },
      },
    });
    const { code, err } = await cliAgainst(hub, ["run", "delete", "r1"]);
    expect(code).toBe(1);
    expect(err).toContain('Update run "r1" is Running: stop it');
  });
});

function gate(
  id: string,
  state: wire.GateState,
  reachedAtMs?: number,
): wire.Gate {
  return {
    id,
    type: "GATE_TYPE_APPROVAL",
    displayName: `${id} ok`,
    state,
    ...(reachedAtMs === undefined ? {} : { reachedAtMs }),
    message: "",
  };
}

describe("flotilla gate list|approve", () => {
  const gates: wire.RunGate[] = [
    {
      run: "r1",
      gate: gate("stage:canary:after", "GATE_STATE_PENDING", NOW_MS - 300_000),
    },
    { run: "r1", gate: gate("group:prod:before", "GATE_STATE_NOT_STARTED") },
    { run: "r2", gate: gate("stage:canary:after", "GATE_STATE_COMPLETED") },
  ];

  it("lists gates as a table, passing the state and run filters", async () => {
    await using hub = await startFakeHub({
      unary: { ListGates: () => ({ gates }) },
    });
    const { code, out } = await cliAgainst(hub, [
      "gate",
      "list",
      "--state",
      "Pending",
      "--state",
      "Completed",
      "--run",
      "r1",
    ]);
    expect(code).toBe(0);
    expect(hub.requests("ListGates")).toEqual([
      { states: ["GATE_STATE_PENDING", "GATE_STATE_COMPLETED"], run: "r1" },
    ]);
    const lines = out.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      /^RUN +GATE +NAME +TYPE +WHERE +STATE +SINCE +LAST MEASUREMENT$/,
    );
    expect(lines[1]).toMatch(
      /^r1 +stage:canary:after +stage:canary:after ok +Approval +after stage canary +Pending +5m +-$/,
    );
    expect(lines[2]).toMatch(/before group prod +NotStarted +- +-$/);
    expect(lines).toHaveLength(4);
  });

  it("refuses an unknown state naming the flag and value", async () => {
    await using hub = await startFakeHub({});
    const { code, err } = await cliAgainst(hub, [
      "gate",
      "list",
      "--state",
      "Waiting",
    ]);
    expect(code).toBe(2);
    expect(err).toContain(
      'option "--state" must be one of NotStarted, Pending, Completed, Skipped, Failed (got "Waiting")',
    );
  });

  it("approves a gate in the one run where it waits, and names the runs when that is ambiguous", async () => {
    let listed = gates;
    await using hub = await startFakeHub({
      unary: {
        ListGates: () => ({ gates: listed }),
        ApproveGate: () => ({ run: runToWire(runAtApproval(), 4) }),
      },
    });
    const found = await cliAgainst(hub, [
      "gate",
      "approve",
      "stage:canary:after",
      "--reason",
      "looks good",
    ]);
    expect(found.err).toBe("");
    expect(found.code).toBe(0);
    expect(hub.requests("ApproveGate")).toEqual([
      { run: "r1", gateId: "stage:canary:after", reason: "looks good" },
    ]);
    expect(found.out).toContain("Run r1: gate stage:canary:after approved.");

    listed = [
      ...gates,
      { run: "r3", gate: gate("stage:canary:after", "GATE_STATE_PENDING") },
    ];
    const ambiguous = await cliAgainst(hub, [
      "gate",
      "approve",
      "stage:canary:after",
    ]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.err).toContain(
      "gate stage:canary:after waits in several runs (r1, r3): say which with --run R",
    );
    const missing = await cliAgainst(hub, [
      "gate",
      "approve",
      "stage:nope:after",
    ]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("no run has a gate stage:nope:after");
    expect(hub.requests("ApproveGate")).toHaveLength(1);

    const named = await cliAgainst(hub, [
      "gate",
      "approve",
      "stage:canary:after",
      "--run",
      "r3",
    ]);
    expect(named.code).toBe(0);
    expect(hub.requests("ApproveGate").at(-1)).toMatchObject({ run: "r3" });
    expect(hub.requests("ListGates")).toHaveLength(3);
  });

  it("refuses a gate that is not a gate id", async () => {
    await using hub = await startFakeHub({});
    const { code, err } = await cliAgainst(hub, ["gate", "approve", "canary"]);
    expect(code).toBe(2);
    expect(err).toContain(
      'GATE must be stage:NAME:before|after or group:NAME:before|after (got "canary"',
    );
  });
});

describe("global options before or after the command words", () => {
  const listed = (): wire.ListUpdateRunsResponse => ({
    runs: [runSummaryToWire(newRun(), { revision: 1 })],
    nextPageToken: "",
  });

  it.each([
    (hub: string) => [
      "--hub",
      hub,
      "--insecure-plaintext",
      "-o",
      "json",
      "run",
      "list",
    ],
    (hub: string) => [
      "run",
      "--hub",
      hub,
      "--insecure-plaintext",
      "--output=json",
      "list",
    ],
    (hub: string) => [
      "run",
      "list",
      "-ojson",
      "--hub",
      hub,
      "--insecure-plaintext",
    ],
    (hub: string) => [
      `--hub=${hub}`,
      "run",
      "--insecure-plaintext",
      "list",
      "-o",
      "json",
    ],
  ])("argv %#", async (argv) => {
    await using hub = await startFakeHub({
      unary: { ListUpdateRuns: listed },
    });
    const { code, out, err } = await runCli(argv(hub.address), memoryIo());
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ runs: [{ name: "upgrade-1-31" }] });
  });

  it("takes --context before the command words as after them", async () => {
    const before = await runCli(
      ["--context", "nope", "run", "list"],
      memoryIo(),
    );
    const after = await runCli(
      ["run", "list", "--context", "nope"],
      memoryIo(),
    );
    expect(before.code).toBe(2);
    expect(before.err).toBe(after.err);
    expect(before.err).toContain('context "nope"');
  });

  it("still refuses an option that is not global before the command words", async () => {
    const { code, err } = await runCli(
      ["--reason", "x", "run", "list"],
      memoryIo(),
    );
    expect(code).toBe(2);
    expect(err).toContain('unknown option "--reason"');
  });
});
