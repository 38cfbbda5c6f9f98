import { describe, expect, test } from "vitest";
import { resolveRun } from "../src/staged/resolve.js";
import {
  ALL_MEMBERS_AT_ONCE,
  parseAutoUpgradeProfile,
  profileNameProblem,
  profileRunName,
  resolveProfileTarget,
  shortHash,
  type AutoUpgradeProfileSpec,
} from "../src/versions/auto-upgrade-profile.js";
import type { Cluster } from "../src/cluster.js";
import type { AvailableVersions } from "../src/versions/version.js";

const catalogue: AvailableVersions = {
  kubernetes: [
    { version: "1.29.7" },
    { version: "1.30.5" },
    { version: "1.31.2" },
    { version: "1.32.0", preview: true },
    { version: "1.28.15", lts: true },
  ],
  nodeImages: [
    { family: "AKSUbuntu-2204gen2", version: "202603.01.0" },
    { family: "AKSUbuntu-2204gen2", version: "202603.08.0" },
    { family: "AKSWindows-2022", version: "20348.2582.240916" },
  ],
};

const WINDOWS_NEXT = {
  family: "AKSWindows-2022",
  version: "20348.2700.241010",
};

/** Two clusters, one Linux and one Windows pool each, behind every image offered. */
const FLEET: Cluster[] = ["c-1", "c-2"].map((name) => ({
  name,
  labels: {},
  groups: [],
  kubernetesVersion: "1.30.5",
  nodePools: [
    {
      name: "linux",
      imageFamily: "AKSUbuntu-2204gen2",
      imageVersion: "202602.01.0",
    },
    {
      name: "win",
      imageFamily: "AKSWindows-2022",
      imageVersion: "20348.2500.240801",
    },
  ],
}));

function spec(
  fields: Partial<AutoUpgradeProfileSpec> &
    Pick<AutoUpgradeProfileSpec, "channel">,
): AutoUpgradeProfileSpec {
  return { nodeImageSelection: "Latest", disabled: false, ...fields };
}

describe("parseAutoUpgradeProfile", () => {
  test("accepts the AKS shape: updateStrategyId as a resource ID, nodeImageSelection as {type}", () => {
    expect(
      parseAutoUpgradeProfile({
        channel: "NodeImage",
        updateStrategyId:
          "/subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/fleets/f/updateStrategies/safe",
        nodeImageSelection: { type: "Consistent" },
        disabled: true,
      }),
    ).toEqual({
      ok: true,
      value: {
        channel: "NodeImage",
        strategy: "safe",
        nodeImageSelection: "Consistent",
        disabled: true,
      },
    });
  });

  test("defaults: Latest images, enabled, no strategy (all members at once)", () => {
    expect(parseAutoUpgradeProfile({ channel: "Rapid" })).toEqual({
      ok: true,
      value: {
        channel: "Rapid",
        nodeImageSelection: "Latest",
        disabled: false,
      },
    });
  });

  test.each([
    [
      { channel: "Rapid", longTermSupport: true },
      "longTermSupport",
      "is only allowed with channel TargetKubernetesVersion (channel is Rapid)",
      true,
    ],
    [
      { channel: "Stable", targetKubernetesVersion: "1.30" },
      "targetKubernetesVersion",
      "is only allowed with channel TargetKubernetesVersion (channel is Stable)",
      "1.30",
    ],
    [
      { channel: "TargetKubernetesVersion", targetKubernetesVersion: "1.3x" },
      "targetKubernetesVersion",
      'must be a minor version like "1.30"',
      "1.3x",
    ],
    [
      { channel: "Weekly" },
      "channel",
      'must be one of "Rapid", "Stable", "TargetKubernetesVersion", "NodeImage", "SecurityPatch"',
      "Weekly",
    ],
    [
      { channel: "Rapid", strategy: "Not_A_Name" },
      "strategy",
      "must name a stored update strategy (a DNS label)",
      "Not_A_Name",
    ],
    [
      { channel: "Rapid", strategy: "a", updateStrategyId: "b" },
      "updateStrategyId",
      'names strategy "b" but strategy is "a": give one of the two',
      "b",
    ],
  ])("rejects %j at its field with the value", (raw, path, message, value) => {
    expect(parseAutoUpgradeProfile(raw, "profile")).toEqual({
      ok: false,
      problems: [{ path: `profile.${path}`, message, value }],
    });
  });

  test("an unknown field is named, with the closest known one", () => {
    const parsed = parseAutoUpgradeProfile({ channel: "Rapid", disable: true });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems[0]?.path).toBe("disable");
    expect(parsed.problems[0]?.message).toContain('"disabled"');
  });
});

describe("resolveProfileTarget", () => {
  test("Rapid targets the newest GA patch and names its run after the version", () => {
    const resolved = resolveProfileTarget(
      spec({ channel: "Rapid" }),
      catalogue,
      FLEET,
    );
    expect(resolved.type).toBe("target");
    if (resolved.type !== "target") return;
    expect(resolved.target.key).toBe("1.31.2");
    expect(resolved.target.upgrade).toEqual({
      type: "Full",
      kubernetesVersion: "1.31.2",
      nodeImageSelection: "Latest",
    });
    expect(profileRunName("rapid", resolved.target)).toBe("rapid-1-31-2");
  });

  test("NodeImage targets the newest image of each family; a new image changes the key", () => {
    const profile = spec({
      channel: "NodeImage",
      nodeImageSelection: "Consistent",
    });
    const before = resolveProfileTarget(profile, catalogue, FLEET);
    if (before.type !== "target") throw new Error("expected a target");
    expect(before.target.description).toBe(
      "AKSUbuntu-2204gen2 202603.08.0, AKSWindows-2022 20348.2582.240916",
    );
    expect(before.target.upgrade).toEqual({
      type: "NodeImageOnly",
      nodeImageSelection: "Consistent",
    });
    expect(profileRunName("images", before.target)).toMatch(
      /^images-img-[0-9a-f]{8}$/,
    );
    const reordered = resolveProfileTarget(
      profile,
      { ...catalogue, nodeImages: [...catalogue.nodeImages].reverse() },
      [...FLEET].reverse(),
    );
    expect(reordered).toEqual(before);
    const released = resolveProfileTarget(
      profile,
      { ...catalogue, nodeImages: [...catalogue.nodeImages, WINDOWS_NEXT] },
      FLEET,
    );
    if (released.type !== "target") throw new Error("expected a target");
    expect(released.target.key).not.toBe(before.target.key);
  });

  test("NodeImage waits until an image is offered to every cluster of its family", () => {
    const profile = spec({ channel: "NodeImage" });
    const fleet = FLEET.map((c, i) => ({
      ...c,
      region: i === 0 ? "westeurope" : "eastus",
    }));
    // 202603.08.0 has reached westeurope only: the target stays at what both clusters are offered.
    const partly: AvailableVersions = {
      kubernetes: [],
      nodeImages: [
        { family: "AKSUbuntu-2204gen2", version: "202603.01.0" },
        {
          family: "AKSUbuntu-2204gen2",
          version: "202603.08.0",
          regions: ["westeurope"],
        },
      ],
    };
    const resolved = resolveProfileTarget(profile, partly, fleet);
    if (resolved.type !== "target") throw new Error("expected a target");
    expect(resolved.target.description).toBe("AKSUbuntu-2204gen2 202603.01.0");
  });

  test("NodeImage has no target while every pool runs the newest image offered", () => {
    const current = FLEET.map((c) => ({
      ...c,
      nodePools: c.nodePools.map((p) => ({
        ...p,
        imageVersion:
          p.imageFamily === "AKSWindows-2022"
            ? "20348.2582.240916"
            : "202603.08.0",
      })),
    }));
    expect(
      resolveProfileTarget(spec({ channel: "NodeImage" }), catalogue, current),
    ).toEqual({
      type: "skip",
      reason:
        "every node pool already runs the newest node image offered to every cluster of its family",
    });
  });

  test("SecurityPatch ignores Windows families: a Windows image alone is no new target", () => {
    const profile = spec({ channel: "SecurityPatch" });
    const before = resolveProfileTarget(profile, catalogue, FLEET);
    const after = resolveProfileTarget(
      profile,
      { ...catalogue, nodeImages: [...catalogue.nodeImages, WINDOWS_NEXT] },
      FLEET,
    );
    expect(after).toEqual(before);
    expect(
      resolveProfileTarget(
        profile,
        { kubernetes: [], nodeImages: [WINDOWS_NEXT] },
        FLEET,
      ),
    ).toEqual({
      type: "skip",
      reason: "no Linux node image is offered to every cluster of its family",
    });
  });

  test("Stable with only one GA minor offered is skipped with the channel's reason", () => {
    const resolved = resolveProfileTarget(
      spec({ channel: "Stable" }),
      { kubernetes: [{ version: "1.31.2" }], nodeImages: [] },
      FLEET,
    );
    expect(resolved.type).toBe("skip");
  });
});

describe("names", () => {
  test("profile names are DNS labels of at most 40 characters", () => {
    expect(profileNameProblem("nightly-images")).toBeUndefined();
    expect(profileNameProblem("a".repeat(41))).toContain("at most 40");
    expect(profileNameProblem("Bad_Name")).toContain("DNS label");
    expect(profileNameProblem("")).toBe("is required");
  });

  test("shortHash is FNV-1a (stable across processes)", () => {
    expect(shortHash("")).toBe("811c9dc5");
    expect(shortHash("a")).toBe("e40c292c");
  });
});

describe("the run of a profile without a strategy", () => {
  test("holds every member in one group, all in flight at once, and keeps its origin", () => {
    const clusters = ["c-1", "c-2", "c-3"].map((name) => ({
      name,
      labels: {},
      groups: [],
      kubernetesVersion: "1.30.5",
      nodePools: [],
    }));
    const origin = {
      profile: "rapid",
      channel: "Rapid",
      target: "1.31.2",
      createdBy: "hub",
    } as const;
    const resolved = resolveRun({
      name: "rapid-1-31-2",
      strategy: ALL_MEMBERS_AT_ONCE,
      clusters,
      payload: {
        kind: "upgrade",
        upgrade: {
          type: "Full",
          kubernetesVersion: "1.31.2",
          nodeImageSelection: "Latest",
        },
      },
      createdAtMs: 0,
      origin,
    });
    if (!resolved.ok) throw new Error("expected a run");
    const [stage] = resolved.value.stages;
    expect(stage?.groups.map((g) => g.members.length)).toEqual([3]);
    expect(stage?.groups[0]?.maxConcurrency).toBe(3);
    expect(resolved.value.origin).toEqual(origin);
  });
});
