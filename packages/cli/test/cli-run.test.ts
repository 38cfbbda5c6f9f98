/**
 * `flotilla run create|start|…|list` against a fake hub answering with runs made by core's engine:
 * the requests (payload, strategy, reason, actor), local refusals, and the printed answers.
 */
import { FlotillaError } from "@flotilla/core";
import { runSummaryToWire, runToWire, type wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { memoryIo } from "./fixtures.js";
import { newRun, runAtApproval, STRATEGY } from "./run-fixtures.js";

describe("flotilla run create", () => {
  it("sends the strategy name, an upgrade payload, the deadline and the reason, and shows the new run", async () => {
    await using hub = await startFakeHub({
      unary: {
        CreateUpdateRun: () => ({ run: runToWire(newRun(), 1), warnings: [] }),
      },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "run",
      "create",
      "upgrade-1-31",
      "--strategy",
      "canary-first",
      "--kubernetes-version",
      "1.31.2",
      "--node-image-selection",
      "Consistent",
      "--progress-deadline",
      "2h",
      "--reason",
      "CVE-2026-1234",
      "--actor",
      "alice",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const [request] = hub.requests("CreateUpdateRun");
    expect(request).toMatchObject({
      name: "upgrade-1-31",
      strategyName: "canary-first",
      payload: {
        upgrade: {
          type: "UPGRADE_TYPE_FULL",
          kubernetesVersion: "1.31.2",
          nodeImageSelection: "NODE_IMAGE_SELECTION_CONSISTENT",
          securityPatchOnly: false,
        },
      },
      progressDeadlineSeconds: 7200,
      reason: "CVE-2026-1234",
    });
    expect(hub.calls[0]?.actor).toBe("alice");
    expect(out).toMatch(
      /^Run upgrade-1-31 created\.\nRun upgrade-1-31 {2}upgrade to Kubernetes 1\.31\.2/,
    );
    expect(out).toContain("  flotilla run start upgrade-1-31");
  });

  it("--long-term-support: the upgrade requires long-term support, and the new run says so", async () => {
    const run = newRun();
    const lts = {
      ...run,
      payload: {
        kind: "upgrade" as const,
        upgrade: {
          type: "Full" as const,
          kubernetesVersion: "1.27.102",
          nodeImageSelection: "Latest" as const,
          requiresLongTermSupport: true as const,
        },
      },
    };
    await using hub = await startFakeHub({
      unary: {
        CreateUpdateRun: () => ({ run: runToWire(lts, 1), warnings: [] }),
      },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "run",
      "create",
      "lts-1-27",
      "--strategy",
      "canary-first",
      "--kubernetes-version",
      "1.27.102",
      "--long-term-support",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const [request] = hub.requests("CreateUpdateRun");
    expect(request).toMatchObject({
      payload: {
        upgrade: {
          kubernetesVersion: "1.27.102",
          requiresLongTermSupport: true,
        },
      },
    });
    expect(out).toContain(
      "upgrade to Kubernetes 1.27.102 (control plane and nodes, node images Latest; requires long-term support)",
    );
  });

  it("sends a strategy file's document as strategy_json and a bundle revision payload", async () => {
    await using hub = await startFakeHub({
      unary: {
        CreateUpdateRun: () => ({
          run: runToWire(newRun(), 1),
          warnings: [
            { code: "NoGates", message: "no gate stops a bad revision" },
          ],
        }),
      },
    });
    const io = memoryIo({
      "s.yaml":
        "stages:\n  - name: canary\n    groups: [{name: canary, maxConcurrency: 2, maxAllowedFailures: 1}]\n    afterGates: [{type: Approval, displayName: Canary looks good}]\n  - name: prod\n    groups: [{name: prod, maxConcurrency: 2}]\n",
    });
    const { code, out } = await cliAgainst(
      hub,
      [
        "run",
        "create",
        "web-r2",
        "-f",
        "s.yaml",
        "--bundle",
        "web",
        "--revision",
        "r2",
      ],
      io,
    );
    expect(code).toBe(0);
    const [request] = hub.requests<{ strategyJson: string; payload: unknown }>(
      "CreateUpdateRun",
    );
    expect(JSON.parse(request?.strategyJson ?? "")).toEqual(STRATEGY);
    expect(request?.payload).toMatchObject({
      bundle: { bundle: "web", revision: "r2" },
    });
    expect(out).toContain("! no gate stops a bad revision (NoGates)");
  });

  it.each([
    [["--strategy", "s"], "say what to roll out"],
    [
      [
        "--strategy",
        "s",
        "--kubernetes-version",
        "1.31.2",
        "--node-image-only",
      ],
      "give only one of",
    ],
    [
      ["--kubernetes-version", "1.31.2"],
      "give the strategy as --strategy NAME or -f FILE",
    ],
    [
      ["--strategy", "s", "--kubernetes-version", "1.31.2", "--revision", "r1"],
      "--revision goes only with --bundle",
    ],
    [
      ["--strategy", "s", "--kubernetes-version", "1.31"],
      "--kubernetes-version: ",
    ],
    [
      ["--strategy", "s", "--node-image-only", "--long-term-support"],
      "--long-term-support: is only allowed for Full and ControlPlaneOnly",
    ],
    [
      [
        "--strategy",
        "s",
        "--bundle",
        "web",
        "--revision",
        "r2",
        "--long-term-support",
      ],
      "--long-term-support goes only with an upgrade",
    ],
    [
      ["--strategy", "s", "--node-image-only", "--progress-deadline", "90"],
      '--progress-deadline needs a unit, e.g. "90s"',
    ],
  ])("refuses %j locally with exit 2", async (flags, message) => {
    await using hub = await startFakeHub({});
    const { code, err } = await cliAgainst(hub, [
      "run",
      "create",
      "r",
      ...flags,
    ]);
    expect(code).toBe(2);
    expect(err).toContain(message);
    expect(hub.calls).toEqual([]);
  });

  it("prints the hub's INVALID_ARGUMENT problems against the strategy file, exit 2", async () => {
    await using hub = await startFakeHub({
      unary: {
        CreateUpdateRun: () => {
          throw FlotillaError.invalid("update strategy", [
            {
              path: "stages[0].groups[0].maxConcurrency",
              message: "must be at least 1",
              value: 0,
            },
          ]);
        },
      },
    });
    const io = memoryIo({ "s.json": JSON.stringify(STRATEGY) });
    const { code, err } = await cliAgainst(
      hub,
      ["run", "create", "r", "-f", "s.json", "--node-image-only"],
      io,
    );
    expect(code).toBe(2);
    expect(err).toContain(
      "  s.json: stages[0].groups[0].maxConcurrency: must be at least 1 (got 0)\n",
    );
  });
});

describe("flotilla run actions and list", () => {
  const answer = (): { run: wire.RunStatus } => ({
    run: runToWire(runAtApproval(), 4),
  });

  it("approves a gate with the run, gate id and reason", async () => {
    await using hub = await startFakeHub({ unary: { ApproveGate: answer } });
    const { code, out } = await cliAgainst(hub, [
      "run",
      "approve",
      "upgrade-1-31",
      "stage:canary:after",
      "--reason",
      "dashboards green",
    ]);
    expect(code).toBe(0);
    expect(hub.requests("ApproveGate")).toEqual([
      {
        run: "upgrade-1-31",
        gateId: "stage:canary:after",
        reason: "dashboards green",
      },
    ]);
    expect(out).toMatch(
      /^Run upgrade-1-31: gate stage:canary:after approved\.\n {2}State: Pending/,
    );
  });

  it("refuses a malformed gate id locally, exit 2", async () => {
    await using hub = await startFakeHub({});
    const { code, err } = await cliAgainst(hub, [
      "run",
      "approve",
      "r",
      "canary-after",
    ]);
    expect(code).toBe(2);
    expect(err).toContain(
      'gate id must be stage:NAME:before|after or group:NAME:before|after (got "canary-after")',
    );
  });

  it("sends skip targets and retry members; a refusal exits 1", async () => {
    await using hub = await startFakeHub({
      unary: {
        SkipUpdateRunTargets: answer,
        RetryUpdateRunMembers: () => {
          throw new FlotillaError(
            "failed_precondition",
            'Cannot retry "canary-1": it is Succeeded, not Failed',
          );
        },
      },
    });
    const skip = await cliAgainst(hub, [
      "run",
      "skip",
      "upgrade-1-31",
      "--member",
      "canary-2",
      "--group",
      "prod",
    ]);
    expect(skip.code).toBe(0);
    expect(hub.requests("SkipUpdateRunTargets")).toEqual([
      {
        name: "upgrade-1-31",
        stages: [],
        groups: ["prod"],
        members: ["canary-2"],
        reason: "",
      },
    ]);
    const retry = await cliAgainst(hub, [
      "run",
      "retry",
      "upgrade-1-31",
      "--member",
      "canary-1",
    ]);
    expect(retry.code).toBe(1);
    expect(retry.err).toBe(
      'flotilla: Cannot retry "canary-1": it is Succeeded, not Failed\n',
    );
  });

  it("lists runs with state, stage, a progress bar and counts, filtered by state", async () => {
    const done = runAtApproval();
    await using hub = await startFakeHub({
      unary: {
        ListUpdateRuns: () => ({
          runs: [
            runSummaryToWire(done, { strategyName: "canary-first" }),
            runSummaryToWire(newRun()),
          ],
          nextPageToken: "",
        }),
      },
    });
    const { code, out } = await cliAgainst(hub, [
      "run",
      "list",
      "--state",
      "Pending",
      "--state",
      "NotStarted",
    ]);
    expect(code).toBe(0);
    expect(hub.requests("ListUpdateRuns")[0]).toMatchObject({
      states: ["RUN_STATE_PENDING", "RUN_STATE_NOT_STARTED"],
    });
    const lines = out.split("\n");
    expect(lines[0]).toMatch(
      /^NAME +STATE +STAGE +PROGRESS +OK\/FAILED\/TOTAL +AGE$/,
    );
    expect(lines[1]).toMatch(
      /^upgrade-1-31 +Pending +canary +\[█████░░░░░\] +1\/1\/4 +30m$/,
    );
    expect(lines[2]).toMatch(
      /^upgrade-1-31 +NotStarted +- +\[░{10}\] +0\/0\/4 +30m$/,
    );
  });
});
