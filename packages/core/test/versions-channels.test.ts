import { describe, expect, test } from "vitest";
import type { Cluster } from "../src/cluster.js";
import { parseWith } from "../src/schema.js";
import {
  longTermSupportFailure,
  memberUpgradeDecision,
} from "../src/upgrade.js";
import {
  resolveChannel,
  upgradeProfileField,
} from "../src/versions/channels.js";
import type { AvailableVersions } from "../src/versions/version.js";

function offered(...versions: string[]): AvailableVersions {
  return {
    kubernetes: versions.map((version) => ({ version })),
    nodeImages: [],
  };
}

function cluster(name: string, kubernetesVersion: string): Cluster {
  return { name, labels: {}, groups: [], kubernetesVersion, nodePools: [] };
}

function target(
  resolution: ReturnType<typeof resolveChannel>,
): string | undefined {
  return resolution.type === "upgrade" &&
    resolution.upgrade.type !== "NodeImageOnly"
    ? resolution.upgrade.kubernetesVersion
    : undefined;
}

const rapid = { channel: "Rapid" } as const;
const stable = { channel: "Stable" } as const;

describe("Rapid", () => {
  test("Rapid: newest supported minor is 1.30 → every 1.30 patch release is taken", () => {
    const before = offered("1.28.9", "1.29.7", "1.30.3");
    expect(resolveChannel(rapid, before)).toEqual({
      type: "upgrade",
      upgrade: {
        type: "Full",
        kubernetesVersion: "1.30.3",
        nodeImageSelection: "Latest",
      },
      requiresLongTermSupport: false,
    });
    const patched = offered("1.28.9", "1.29.7", "1.30.3", "1.30.5");
    expect(target(resolveChannel(rapid, patched))).toBe("1.30.5");
  });

  test("Rapid: 1.31 ships → a cluster that followed 1.30 is upgraded to the latest 1.31 patch", () => {
    const available = offered("1.29.7", "1.30.5", "1.31.0", "1.31.1");
    const resolution = resolveChannel(rapid, available);
    expect(target(resolution)).toBe("1.31.1");
    if (resolution.type === "skip") throw new Error("unreachable");
    expect(
      memberUpgradeDecision(
        cluster("c-1", "1.30.5"),
        resolution.upgrade,
        available,
      ),
    ).toMatchObject({
      action: "upgrade",
      kubernetesVersion: "1.31.1",
    });
  });

  test("Rapid ignores preview versions, also when they are the newest minor", () => {
    const available: AvailableVersions = {
      kubernetes: [
        { version: "1.30.5" },
        { version: "1.31.0", preview: true },
        { version: "1.30.6", preview: true },
      ],
      nodeImages: [],
    };
    expect(target(resolveChannel(rapid, available))).toBe("1.30.5");
  });

  test("Rapid counts a version offered in one region only (members elsewhere wait as Pending)", () => {
    const available: AvailableVersions = {
      kubernetes: [
        { version: "1.30.5" },
        { version: "1.31.2", regions: ["westeurope"] },
      ],
      nodeImages: [],
    };
    expect(target(resolveChannel(rapid, available))).toBe("1.31.2");
  });

  test("Rapid takes the node-image selection from the options", () => {
    const resolution = resolveChannel(rapid, offered("1.30.5"), {
      nodeImageSelection: "Consistent",
    });
    expect(
      resolution.type === "upgrade" && resolution.upgrade.nodeImageSelection,
    ).toBe("Consistent");
  });
});

describe("Stable", () => {
  test("Stable: newest supported minor is 1.30 → Stable takes the 1.29 patch releases", () => {
    expect(
      target(
        resolveChannel(stable, offered("1.28.9", "1.29.4", "1.29.7", "1.30.5")),
      ),
    ).toBe("1.29.7");
  });

  test("Stable: 1.31 ships → a cluster that followed 1.29 is upgraded to the latest 1.30 patch", () => {
    const available = offered("1.29.7", "1.30.3", "1.30.5", "1.31.0");
    const resolution = resolveChannel(stable, available);
    expect(target(resolution)).toBe("1.30.5");
    if (resolution.type === "skip") throw new Error("unreachable");
    expect(
      memberUpgradeDecision(
        cluster("c-1", "1.29.7"),
        resolution.upgrade,
        available,
      ),
    ).toMatchObject({
      action: "upgrade",
      kubernetesVersion: "1.30.5",
    });
  });

  test("Stable (SDK example): from 1.17.7 with 1.17.9, 1.18.4, 1.18.6, 1.19.1 available → 1.18.6", () => {
    const available = offered("1.17.9", "1.18.4", "1.18.6", "1.19.1");
    const resolution = resolveChannel(stable, available);
    expect(target(resolution)).toBe("1.18.6");
    if (resolution.type === "skip") throw new Error("unreachable");
    expect(
      memberUpgradeDecision(
        cluster("c-1", "1.17.7"),
        resolution.upgrade,
        available,
      ),
    ).toMatchObject({
      action: "upgrade",
      kubernetesVersion: "1.18.6",
    });
  });

  test("Stable fails with a reason when minor N−1 has no GA patch", () => {
    expect(resolveChannel(stable, offered("1.28.9", "1.30.5"))).toEqual({
      type: "skip",
      reason:
        "Stable follows 1.29 (one minor before 1.30), and no GA patch of it is offered",
    });
  });
});

describe("TargetKubernetesVersion", () => {
  test('TargetKubernetesVersion "1.30": patch 1.30.5 is published → the run targets 1.30.5', () => {
    const profile = {
      channel: "TargetKubernetesVersion",
      targetKubernetesVersion: "1.30",
    } as const;
    expect(
      target(resolveChannel(profile, offered("1.29.7", "1.30.3", "1.30.5"))),
    ).toBe("1.30.5");
  });

  test("TargetKubernetesVersion never moves to the next minor when it ships", () => {
    const profile = {
      channel: "TargetKubernetesVersion",
      targetKubernetesVersion: "1.30",
    } as const;
    expect(
      target(
        resolveChannel(
          profile,
          offered("1.30.5", "1.31.0", "1.31.4", "1.32.1"),
        ),
      ),
    ).toBe("1.30.5");
  });

  test('TargetKubernetesVersion "1.29" with longTermSupport, newest community minor 1.33: patch 1.29.5 → run target 1.29.5; non-LTS clusters fail it', () => {
    const available: AvailableVersions = {
      kubernetes: [
        { version: "1.29.4", lts: true },
        { version: "1.29.5", lts: true },
        { version: "1.31.9" },
        { version: "1.32.4" },
        { version: "1.33.1" },
      ],
      nodeImages: [],
    };
    const profile = {
      channel: "TargetKubernetesVersion",
      targetKubernetesVersion: "1.29",
      longTermSupport: true,
    } as const;
    const resolution = resolveChannel(profile, available);
    const upgrade = {
      type: "Full",
      kubernetesVersion: "1.29.5",
      nodeImageSelection: "Latest",
      requiresLongTermSupport: true,
    } as const;
    expect(resolution).toEqual({
      type: "upgrade",
      upgrade,
      requiresLongTermSupport: true,
    });
    const lts = { name: "c-lts", supportPlan: "AKSLongTermSupport" } as const;
    expect(longTermSupportFailure(lts, upgrade)).toBeUndefined();
    const failure =
      'cluster "c-plain" cannot take 1.29.5: it is past standard support and the cluster does not have long-term support enabled';
    expect(longTermSupportFailure({ name: "c-plain" }, upgrade)).toBe(failure);
    expect(
      longTermSupportFailure(
        { name: "c-plain", supportPlan: "KubernetesOfficial" },
        upgrade,
      ),
    ).toBe(failure);
    // The run's per-member decision: the LTS cluster upgrades, the other fails.
    expect(
      memberUpgradeDecision(
        { ...cluster("c-lts", "1.28.9"), supportPlan: "AKSLongTermSupport" },
        upgrade,
        available,
      ),
    ).toMatchObject({ action: "upgrade", kubernetesVersion: "1.29.5" });
    expect(
      memberUpgradeDecision(cluster("c-plain", "1.28.9"), upgrade, available),
    ).toEqual({
      action: "fail",
      reason: "NoLongTermSupport",
      message: failure,
    });
  });

  test("TargetKubernetesVersion older than N−2 without longTermSupport is refused", () => {
    const profile = {
      channel: "TargetKubernetesVersion",
      targetKubernetesVersion: "1.29",
    } as const;
    expect(resolveChannel(profile, offered("1.29.5", "1.33.1"))).toEqual({
      type: "skip",
      reason:
        "1.29 is older than standard support (1.31–1.33): set longTermSupport: true to follow an LTS minor",
    });
  });

  test("TargetKubernetesVersion past N−2 with longTermSupport counts only patches marked lts", () => {
    const profile = {
      channel: "TargetKubernetesVersion",
      targetKubernetesVersion: "1.29",
      longTermSupport: true,
    } as const;
    const available: AvailableVersions = {
      kubernetes: [
        { version: "1.29.5", lts: true },
        { version: "1.29.6" },
        { version: "1.33.1" },
      ],
      nodeImages: [],
    };
    expect(target(resolveChannel(profile, available))).toBe("1.29.5");
    expect(resolveChannel(profile, offered("1.29.6", "1.33.1"))).toEqual({
      type: "skip",
      reason:
        "1.29 is older than standard support and no long-term-support patch of it is offered",
    });
  });

  test("TargetKubernetesVersion at N−2 is standard support: no LTS needed and every GA patch counts", () => {
    const profile = {
      channel: "TargetKubernetesVersion",
      targetKubernetesVersion: "1.31",
    } as const;
    const resolution = resolveChannel(
      profile,
      offered("1.31.8", "1.31.9", "1.33.1"),
    );
    expect(target(resolution)).toBe("1.31.9");
    expect(
      resolution.type === "upgrade" && resolution.requiresLongTermSupport,
    ).toBe(false);
    if (resolution.type === "skip") throw new Error(resolution.reason);
    expect(resolution.upgrade).not.toHaveProperty("requiresLongTermSupport");
    expect(
      longTermSupportFailure({ name: "c-1" }, resolution.upgrade),
    ).toBeUndefined();
  });

  test("TargetKubernetesVersion fails when no GA patch of the minor is offered yet", () => {
    const profile = {
      channel: "TargetKubernetesVersion",
      targetKubernetesVersion: "1.34",
    } as const;
    const available: AvailableVersions = {
      kubernetes: [{ version: "1.33.1" }, { version: "1.34.0", preview: true }],
      nodeImages: [],
    };
    expect(resolveChannel(profile, available)).toEqual({
      type: "skip",
      reason: "no GA patch of 1.34 is offered yet",
    });
  });
});

describe("node-image channels", () => {
  test("NodeImage resolves to a NodeImageOnly upgrade with Latest images", () => {
    expect(resolveChannel({ channel: "NodeImage" }, offered())).toEqual({
      type: "upgrade",
      upgrade: { type: "NodeImageOnly", nodeImageSelection: "Latest" },
      requiresLongTermSupport: false,
    });
  });

  test("SecurityPatch resolves to a Linux-only security-patch NodeImageOnly upgrade", () => {
    expect(resolveChannel({ channel: "SecurityPatch" }, offered())).toEqual({
      type: "upgrade",
      upgrade: {
        type: "NodeImageOnly",
        nodeImageSelection: "Latest",
        securityPatchOnly: true,
      },
      requiresLongTermSupport: false,
    });
  });
});

test("Rapid/Stable/Target fail with a reason when no GA version is offered", () => {
  const previews: AvailableVersions = {
    kubernetes: [{ version: "1.31.0", preview: true }],
    nodeImages: [],
  };
  for (const channel of ["Rapid", "Stable"] as const) {
    expect(resolveChannel({ channel }, previews)).toEqual({
      type: "skip",
      reason: "no generally available Kubernetes version is offered",
    });
  }
});

test("1.28 → 1.30: Rapid at 1.30 skips a cluster on 1.28 (MinorVersionSkew) and upgrades one on 1.29", () => {
  const available = offered("1.28.9", "1.29.7", "1.30.2", "1.30.5");
  const resolution = resolveChannel(rapid, available);
  if (resolution.type === "skip") throw new Error(resolution.reason);
  expect(
    memberUpgradeDecision(
      cluster("c-old", "1.28.3"),
      resolution.upgrade,
      available,
    ),
  ).toEqual({
    action: "skip",
    reason: "MinorVersionSkew",
    message:
      'cluster "c-old" is on 1.28.3; 1.30.5 is more than one minor version ahead: upgrade one minor at a time',
  });
  expect(
    memberUpgradeDecision(
      cluster("c-new", "1.29.7"),
      resolution.upgrade,
      available,
    ),
  ).toEqual({
    action: "upgrade",
    kubernetesVersion: "1.30.5",
    nodeImages: [],
    message: 'upgrade cluster "c-new" from 1.29.7 to 1.30.5',
  });
});

describe("upgradeProfileField", () => {
  test("accepts each channel and normalizes the target minor", () => {
    expect(parseWith(upgradeProfileField, { channel: "Rapid" })).toEqual({
      ok: true,
      value: { channel: "Rapid" },
    });
    expect(
      parseWith(upgradeProfileField, {
        channel: "TargetKubernetesVersion",
        targetKubernetesVersion: "v1.29",
        longTermSupport: true,
      }),
    ).toEqual({
      ok: true,
      value: {
        channel: "TargetKubernetesVersion",
        targetKubernetesVersion: "1.29",
        longTermSupport: true,
      },
    });
  });

  test.each([
    [
      { channel: "TargetKubernetesVersion" },
      [
        {
          path: "profile.targetKubernetesVersion",
          message:
            'is required for channel TargetKubernetesVersion ("major.minor", e.g. "1.30")',
        },
      ],
    ],
    [
      {
        channel: "Stable",
        targetKubernetesVersion: "1.30",
        longTermSupport: false,
      },
      [
        {
          path: "profile.targetKubernetesVersion",
          message:
            "is only allowed with channel TargetKubernetesVersion (channel is Stable)",
          value: "1.30",
        },
        {
          path: "profile.longTermSupport",
          message:
            "is only allowed with channel TargetKubernetesVersion (channel is Stable)",
          value: false,
        },
      ],
    ],
    [
      { channel: "TargetKubernetesVersion", targetKubernetesVersion: "1.30.5" },
      [
        {
          path: "profile.targetKubernetesVersion",
          message:
            'must be a minor version like "1.30": "{major}.{minor}" without a patch',
          value: "1.30.5",
        },
      ],
    ],
    [
      { channel: "rapid" },
      [
        {
          path: "profile.channel",
          message:
            'must be one of "Rapid", "Stable", "TargetKubernetesVersion", "NodeImage", "SecurityPatch"',
          value: "rapid",
        },
      ],
    ],
    [
      { channel: "Rapid", chanel: "Stable" },
      [
        {
          path: "profile.chanel",
          message: 'unknown field; did you mean "channel"?',
        },
      ],
    ],
  ])("rejects %j with paths and values", (raw, problems) => {
    expect(parseWith(upgradeProfileField, raw, "profile")).toEqual({
      ok: false,
      problems,
    });
  });
});
