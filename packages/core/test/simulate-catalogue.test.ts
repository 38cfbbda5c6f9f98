/**
 * What the platform offers over time in a simulation (docs/plan-and-simulate.md): `available` at
 * the start and `releases` at given times, fed to the engine as AvailableVersionsChanged; and the
 * per-member targets chosen before the start (`plan`), which is where Consistent's choice shows.
 *
 * Members take 10 minutes: canary-1 starts at 10:00, prod-1/prod-2 at 10:10, prod-3/prod-4 at 10:20.
 */
import { describe, expect, it } from "vitest";
import {
  fleet,
  memberOf,
  problemsOf,
  simulated,
  UBUNTU,
  upgradeScenario,
  when,
} from "./simulation-fixtures.js";
import { compact } from "../src/compact.js";

const image = (version: string, regions?: string[]) => ({
  family: UBUNTU,
  version,
  ...compact({ regions }),
});

const nodeImageUpgrade = (nodeImageSelection: "Latest" | "Consistent") => ({
  ...upgradeScenario,
  upgrade: { type: "NodeImageOnly", nodeImageSelection },
});

// prod-4 runs in eastus; everything else in westeurope.
const twoRegions = fleet.map((c) =>
  c.name === "prod-4" ? { ...c, region: "eastus" } : c,
);

describe("node images released during a run", () => {
  it("Latest: each member takes the newest image offered when its own upgrade starts", () => {
    const out = simulated({
      ...nodeImageUpgrade("Latest"),
      available: { nodeImages: [image("202603.01.0")] },
      releases: [{ at: "+15m", nodeImages: [image("202603.08.0")] }],
    });
    const to = (name: string) =>
      memberOf(out, name)?.target?.nodeImages?.[0]?.to;
    expect([to("canary-1"), to("prod-1"), to("prod-2")]).toEqual([
      "202603.01.0",
      "202603.01.0",
      "202603.01.0",
    ]);
    expect([to("prod-3"), to("prod-4")]).toEqual([
      "202603.08.0",
      "202603.08.0",
    ]);
    expect(out.timeline.find((e) => e.type === "offered")).toEqual({
      at: "2026-03-02T10:15:00Z",
      type: "offered",
      message: `Now offered: node image ${UBUNTU} 202603.08.0`,
    });
    // Before the start, Latest's choice is what each member would get if it started then.
    expect(
      out.plan?.members.map((m) => [m.name, m.nodeImages?.[0]?.to]),
    ).toEqual([
      ["canary-1", "202603.01.0"],
      ["prod-1", "202603.01.0"],
      ["prod-2", "202603.01.0"],
      ["prod-3", "202603.01.0"],
      ["prod-4", "202603.01.0"],
    ]);
  });

  it("Consistent: one version per family, the newest offered in every member's region, chosen before the start and kept", () => {
    const out = simulated(
      {
        ...nodeImageUpgrade("Consistent"),
        available: {
          nodeImages: [
            image("202603.01.0"),
            image("202603.08.0", ["westeurope"]),
          ],
        },
        releases: [
          {
            at: "+5m",
            nodeImages: [image("202603.08.0", ["westeurope", "eastus"])],
          },
        ],
      },
      undefined,
      twoRegions,
    );
    expect(out.plan).toMatchObject({
      at: "2026-03-02T10:00:00Z",
      upgrade: { type: "NodeImageOnly", nodeImageSelection: "Consistent" },
      consistentNodeImages: { [UBUNTU]: "202603.01.0" },
    });
    expect(
      out.plan?.members.map((m) => [
        m.name,
        m.wave,
        m.group,
        m.action,
        m.nodeImages,
      ]),
    ).toContainEqual([
      "prod-4",
      "prod",
      "prod",
      "upgrade",
      [{ pool: "system", from: "202602.15.0", to: "202603.01.0" }],
    ]);
    // The release at +5m reaches eastus too, but the run keeps the version chosen at its start.
    expect(memberOf(out, "prod-4")?.target?.nodeImages?.[0]?.to).toBe(
      "202603.01.0",
    );
  });

  it("Consistent with no version common to every region: the family is reported missing and its members are skipped", () => {
    const out = simulated(
      {
        ...nodeImageUpgrade("Consistent"),
        available: { nodeImages: [image("202603.08.0", ["westeurope"])] },
      },
      undefined,
      twoRegions,
    );
    expect(out.plan?.consistentNodeImages).toEqual({});
    expect(out.plan?.missingNodeImages).toEqual([UBUNTU]);
    expect(out.plan?.members.find((m) => m.name === "prod-1")).toMatchObject({
      action: "skip",
      reason: "NoConsistentImage",
    });
  });
});

describe("Kubernetes versions released during a run", () => {
  it("members wait (TargetNotAvailable) until their target is offered in their region, then go on", () => {
    const out = simulated(
      {
        ...upgradeScenario,
        upgrade: { type: "ControlPlaneOnly", kubernetesVersion: "1.31.3" },
        available: { kubernetes: [{ version: "1.31.2" }] },
        releases: [
          {
            at: "+1h",
            kubernetes: [{ version: "1.31.3", regions: ["westeurope"] }],
          },
          {
            at: "+3h",
            kubernetes: [
              { version: "1.31.3", regions: ["westeurope", "eastus"] },
            ],
          },
        ],
      },
      undefined,
      twoRegions,
    );
    expect(out.plan?.members.find((m) => m.name === "canary-1")).toMatchObject({
      action: "upgrade",
      kubernetesVersion: "1.31.3",
      reason: "TargetNotAvailable",
      message: "Kubernetes 1.31.3 is not yet available",
    });
    expect(when(out, "pending", "canary-1")).toBe("2026-03-02T10:00:00Z");
    expect(when(out, "started", "canary-1")).toBe("2026-03-02T11:00:00Z");
    expect(when(out, "started", "prod-3")).toBe("2026-03-02T11:20:00Z");
    // eastus gets the version two hours later: prod-4 waits for it.
    expect(when(out, "started", "prod-4")).toBe("2026-03-02T13:00:00Z");
    expect(out).toMatchObject({
      finalState: "Completed",
      end: "2026-03-02T13:10:00Z",
    });
  });
});

describe("releases in the scenario file", () => {
  it("are checked with their field paths", () => {
    expect(
      problemsOf({
        ...upgradeScenario,
        releases: [
          { at: "+1h" },
          {
            at: "+2h",
            kubernetes: [{ version: "1.31" }],
            nodeImages: [{ family: UBUNTU }],
          },
        ],
      }),
    ).toEqual([
      [
        "scenario",
        "releases[0]",
        "must offer at least one Kubernetes version or node image",
      ],
      [
        "scenario",
        "releases[1].kubernetes[0].version",
        'must be a version like "1.30.5": the patch number is required',
      ],
      ["scenario", "releases[1].nodeImages[0].version", "is required"],
    ]);
  });

  it("may not come before the start", () => {
    expect(
      problemsOf({
        ...upgradeScenario,
        releases: [
          { at: "2026-03-01T00:00:00Z", kubernetes: [{ version: "1.31.3" }] },
        ],
      }),
    ).toEqual([["scenario", "releases[0].at", "must not be before start"]]);
  });

  it("are only for upgrades", () => {
    expect(
      problemsOf({
        start: "2026-03-02T10:00:00Z",
        kind: "update",
        releases: [{ at: "+1h", kubernetes: [{ version: "1.31.3" }] }],
      }),
    ).toEqual([
      [
        "scenario",
        "releases",
        "is only allowed when kind is upgrade (kind is update): bundle revisions do not depend on what the platform offers",
      ],
    ]);
  });
});

describe("an upgrade that requires long-term support", () => {
  it("simulate fails, at their turn and within the budget, the members not on AKSLongTermSupport, as its plan says", () => {
    const lts = fleet.map((c) => ({
      ...c,
      kubernetesVersion: "1.27.9",
      ...(c.name === "canary-1" || c.name === "prod-2"
        ? { supportPlan: "AKSLongTermSupport" }
        : {}),
    }));
    const out = simulated(
      {
        ...upgradeScenario,
        upgrade: {
          type: "Full",
          kubernetesVersion: "1.27.102",
          requiresLongTermSupport: true,
        },
        available: {
          kubernetes: [
            { version: "1.27.102", lts: true },
            { version: "1.30.3" },
          ],
        },
      },
      undefined,
      lts,
    );
    expect(
      out.plan?.members.map((m) => [m.name, m.action, m.reason ?? ""]),
    ).toEqual([
      ["canary-1", "upgrade", ""],
      ["prod-1", "fail", "NoLongTermSupport"],
      ["prod-2", "upgrade", ""],
      ["prod-3", "fail", "NoLongTermSupport"],
      ["prod-4", "fail", "NoLongTermSupport"],
    ]);
    // The prod group's budget is 1: prod-1 fails at its turn (10:10), prod-2 runs; prod-3 fails
    // next and exceeds the budget, so prod-4 never starts.
    expect(
      ["canary-1", "prod-1", "prod-2", "prod-3", "prod-4"].map((n) => [
        n,
        memberOf(out, n)?.state,
        memberOf(out, n)?.reason ?? "",
      ]),
    ).toEqual([
      ["canary-1", "Succeeded", ""],
      ["prod-1", "Failed", "NoLongTermSupport"],
      ["prod-2", "Succeeded", ""],
      ["prod-3", "Failed", "NoLongTermSupport"],
      ["prod-4", "NotStarted", ""],
    ]);
  });
});
