import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { Cluster, NodePool } from "../src/cluster.js";
import { FlotillaError } from "../src/errors.js";
import { parseWith } from "../src/schema.js";
import {
  isTargetAvailable,
  isWindowsImageFamily,
  memberUpgradeDecision,
  selectConsistentNodeImages,
  upgradeField,
  upgradeWindowScope,
  type UpgradePayload,
} from "../src/upgrade.js";
import { resolveChannel } from "../src/versions/channels.js";
import type { AvailableVersions } from "../src/versions/version.js";
import { compact } from "../src/compact.js";

const UBUNTU = "AKSUbuntu-2204gen2containerd";
const WINDOWS = "AKSWindows-2022-containerd";

const available: AvailableVersions = {
  kubernetes: [
    { version: "1.29.9", lts: true },
    { version: "1.30.5" },
    { version: "1.31.0", preview: true },
    { version: "1.31.2", regions: ["westeurope"] },
  ],
  nodeImages: [
    { family: UBUNTU, version: "202602.15.0" },
    {
      family: UBUNTU,
      version: "202603.01.0",
      regions: ["westeurope", "eastus"],
    },
    { family: UBUNTU, version: "202603.08.0", regions: ["westeurope"] },
    { family: WINDOWS, version: "20348.2582.240916" },
  ],
};

function pool(
  name: string,
  imageFamily: string,
  imageVersion: string,
  kubernetesVersion?: string,
): NodePool {
  return {
    name,
    imageFamily,
    imageVersion,
    ...compact({ kubernetesVersion }),
  };
}

function cluster(name: string, fields: Partial<Cluster> = {}): Cluster {
  return { name, labels: {}, groups: [], nodePools: [], ...fields };
}

const full = (
  kubernetesVersion: string,
  nodeImageSelection: "Latest" | "Consistent" = "Latest",
): UpgradePayload => ({
  type: "Full",
  kubernetesVersion,
  nodeImageSelection,
});
const nodeImageOnly = (
  nodeImageSelection: "Latest" | "Consistent" = "Latest",
): UpgradePayload => ({
  type: "NodeImageOnly",
  nodeImageSelection,
});

describe("upgradeField", () => {
  test("parses a Full upgrade, normalizing the version and defaulting to Latest images", () => {
    expect(
      parseWith(upgradeField, { type: "Full", kubernetesVersion: "v1.31.2" }),
    ).toEqual({
      ok: true,
      value: {
        type: "Full",
        kubernetesVersion: "1.31.2",
        nodeImageSelection: "Latest",
      },
    });
  });

  test("accepts the AKS object form of nodeImageSelection", () => {
    expect(
      parseWith(upgradeField, {
        type: "NodeImageOnly",
        nodeImageSelection: { type: "Consistent" },
      }),
    ).toEqual({
      ok: true,
      value: { type: "NodeImageOnly", nodeImageSelection: "Consistent" },
    });
  });

  test("keeps securityPatchOnly on NodeImageOnly", () => {
    expect(
      parseWith(upgradeField, {
        type: "NodeImageOnly",
        securityPatchOnly: true,
      }),
    ).toEqual({
      ok: true,
      value: {
        type: "NodeImageOnly",
        nodeImageSelection: "Latest",
        securityPatchOnly: true,
      },
    });
  });

  test("keeps requiresLongTermSupport on Full and ControlPlaneOnly; false is the same as absent", () => {
    expect(
      parseWith(upgradeField, {
        type: "ControlPlaneOnly",
        kubernetesVersion: "1.27.102",
        requiresLongTermSupport: true,
      }),
    ).toEqual({
      ok: true,
      value: {
        type: "ControlPlaneOnly",
        kubernetesVersion: "1.27.102",
        nodeImageSelection: "Latest",
        requiresLongTermSupport: true,
      },
    });
    expect(
      parseWith(upgradeField, {
        type: "Full",
        kubernetesVersion: "1.27.102",
        requiresLongTermSupport: false,
      }),
    ).toEqual({
      ok: true,
      value: {
        type: "Full",
        kubernetesVersion: "1.27.102",
        nodeImageSelection: "Latest",
      },
    });
  });

  test.each([
    [
      { type: "NodeImageOnly", requiresLongTermSupport: true },
      [
        {
          path: "upgrade.requiresLongTermSupport",
          message:
            "is only allowed for Full and ControlPlaneOnly (long-term support is about Kubernetes minors, not node images)",
          value: true,
        },
      ],
    ],
    [
      { type: "Full" },
      [{ path: "upgrade.kubernetesVersion", message: "is required for Full" }],
    ],
    [
      { type: "ControlPlaneOnly" },
      [
        {
          path: "upgrade.kubernetesVersion",
          message: "is required for ControlPlaneOnly",
        },
      ],
    ],
    [
      { type: "NodeImageOnly", kubernetesVersion: "1.31.2" },
      [
        {
          path: "upgrade.kubernetesVersion",
          message:
            "is not allowed for NodeImageOnly (node-image upgrades keep the Kubernetes version)",
          value: "1.31.2",
        },
      ],
    ],
    [
      { type: "Full", kubernetesVersion: "1.31" },
      [
        {
          path: "upgrade.kubernetesVersion",
          message:
            'must be a version like "1.30.5": the patch number is required',
          value: "1.31",
        },
      ],
    ],
    [
      { type: "Full", kubernetesVersion: "1.31.2", securityPatchOnly: true },
      [
        {
          path: "upgrade.securityPatchOnly",
          message: "is only allowed for NodeImageOnly",
          value: true,
        },
      ],
    ],
    [
      { type: "Upgrade", kubernetesVersion: "1.31.2" },
      [
        {
          path: "upgrade.type",
          message: 'must be one of "Full", "ControlPlaneOnly", "NodeImageOnly"',
          value: "Upgrade",
        },
      ],
    ],
    [
      { type: "Full", kubernetesVerison: "1.31.2" },
      [
        {
          path: "upgrade.kubernetesVerison",
          message: 'unknown field; did you mean "kubernetesVersion"?',
        },
      ],
    ],
    [
      { type: "NodeImageOnly", nodeImageSelection: "Newest" },
      [
        {
          path: "upgrade.nodeImageSelection",
          message: 'must be "Latest" or "Consistent" (or {type: "Latest"})',
          value: "Newest",
        },
      ],
    ],
    [
      {
        type: "NodeImageOnly",
        nodeImageSelection: { type: "Custom", customNodeImageVersions: [] },
      },
      [
        {
          path: "upgrade.nodeImageSelection.customNodeImageVersions",
          message: "unknown field (known fields: type)",
        },
        {
          path: "upgrade.nodeImageSelection.type",
          message:
            "Custom node-image versions are not supported: use Latest or Consistent",
          value: "Custom",
        },
      ],
    ],
    [
      { type: "NodeImageOnly", nodeImageSelection: {} },
      [{ path: "upgrade.nodeImageSelection.type", message: "is required" }],
    ],
  ])("rejects %j with paths and values", (raw, problems) => {
    expect(parseWith(upgradeField, raw, "upgrade")).toEqual({
      ok: false,
      problems,
    });
  });
});

test("upgradeWindowScope: Full and ControlPlaneOnly honour the kubernetes window, NodeImageOnly the nodeImage window", () => {
  expect(upgradeWindowScope(full("1.31.2"))).toBe("kubernetes");
  expect(
    upgradeWindowScope({
      type: "ControlPlaneOnly",
      kubernetesVersion: "1.31.2",
      nodeImageSelection: "Latest",
    }),
  ).toBe("kubernetes");
  expect(upgradeWindowScope(nodeImageOnly())).toBe("nodeImage");
});

test("isWindowsImageFamily matches Windows in any case", () => {
  expect(isWindowsImageFamily(WINDOWS)).toBe(true);
  expect(isWindowsImageFamily("windows-2019")).toBe(true);
  expect(isWindowsImageFamily(UBUNTU)).toBe(false);
});

describe("offers restricted to clusters (a cluster's own catalogue)", () => {
  const own: AvailableVersions = {
    kubernetes: [{ version: "1.31.2", clusters: ["c-a"] }],
    nodeImages: [
      { family: UBUNTU, version: "202601.01.0" },
      { family: UBUNTU, version: "202605.01.0", clusters: ["c-a"] },
      { family: UBUNTU, version: "202604.01.0", clusters: ["c-a"] },
      { family: UBUNTU, version: "202604.01.0", clusters: ["c-b"] },
      { family: WINDOWS, version: "20348.1.1", clusters: ["c-b"] },
    ],
  };
  const a = cluster("c-a", {
    kubernetesVersion: "1.30.5",
    nodePools: [pool("p1", UBUNTU, "202501.01.0")],
  });
  const b = cluster("c-b", {
    kubernetesVersion: "1.30.5",
    nodePools: [
      pool("p1", UBUNTU, "202501.01.0"),
      pool("w1", WINDOWS, "20348.0.1"),
    ],
  });
  const c = cluster("c-c", { nodePools: [pool("p1", "AzureLinux", "3.0")] });

  test("Latest takes the newest image offered to the member itself", () => {
    const upgrade = (m: Cluster): unknown => {
      const d = memberUpgradeDecision(m, nodeImageOnly(), own);
      return d.action === "upgrade" ? d.nodeImages.map((n) => n.to) : d.reason;
    };
    expect(upgrade(a)).toEqual(["202605.01.0"]);
    expect(upgrade(b)).toEqual(["202604.01.0", "20348.1.1"]);
  });

  test("Consistent picks per family the newest version every member using the family can take", () => {
    expect(selectConsistentNodeImages([a, b, c], own)).toEqual({
      selected: { [UBUNTU]: "202604.01.0", [WINDOWS]: "20348.1.1" },
      missing: ["AzureLinux"],
    });
    // Without c-b, c-a's own newest image is common to all (one) members.
    expect(selectConsistentNodeImages([a], own).selected).toEqual({
      [UBUNTU]: "202605.01.0",
    });
  });

  test("a Kubernetes version offered to one cluster is not yet available to another", () => {
    expect(isTargetAvailable(a, full("1.31.2"), own)).toBeUndefined();
    expect(isTargetAvailable(b, full("1.31.2"), own)).toBe(
      'Kubernetes 1.31.2 is not yet available in cluster "c-b" (which reports no region)',
    );
  });

  test("the result does not depend on the order of the offers", () => {
    const reversed = { ...own, nodeImages: [...own.nodeImages].reverse() };
    expect(selectConsistentNodeImages([b, a, c], reversed)).toEqual(
      selectConsistentNodeImages([a, b, c], own),
    );
  });
});

describe("selectConsistentNodeImages", () => {
  test("picks per family the newest version offered in every member's region", () => {
    const clusters = [
      cluster("c-we", {
        region: "westeurope",
        nodePools: [pool("p1", UBUNTU, "202601.01.0")],
      }),
      cluster("c-eus", {
        region: "eastus",
        nodePools: [
          pool("p1", UBUNTU, "202601.01.0"),
          pool("w1", WINDOWS, "20348.2582.240716"),
        ],
      }),
    ];
    expect(selectConsistentNodeImages(clusters, available)).toEqual({
      selected: { [UBUNTU]: "202603.01.0", [WINDOWS]: "20348.2582.240916" },
      missing: [],
    });
  });

  test("a member without a region admits only unrestricted versions", () => {
    const clusters = [
      cluster("c-we", {
        region: "westeurope",
        nodePools: [pool("p1", UBUNTU, "1")],
      }),
      cluster("c-x"),
    ];
    expect(selectConsistentNodeImages(clusters, available).selected).toEqual({
      [UBUNTU]: "202602.15.0",
    });
  });

  test("lists families with no version common to all regions as missing", () => {
    const offer: AvailableVersions = {
      kubernetes: [],
      nodeImages: [
        { family: UBUNTU, version: "202603.08.0", regions: ["westeurope"] },
        { family: "AzureLinux", version: "3.0", regions: ["eastus"] },
      ],
    };
    const clusters = [
      cluster("c-we", {
        region: "westeurope",
        nodePools: [pool("p1", UBUNTU, "1"), pool("p2", "Mariner", "1")],
      }),
      cluster("c-eus", {
        region: "eastus",
        nodePools: [pool("p1", "AzureLinux", "1")],
      }),
    ];
    expect(selectConsistentNodeImages(clusters, offer)).toEqual({
      selected: {},
      missing: [UBUNTU, "AzureLinux", "Mariner"],
    });
  });

  test("does not depend on the order of clusters, pools or offered images (property)", () => {
    const regions = ["westeurope", "eastus", "northeurope", undefined] as const;
    const families = ["A", "B", "AKSWindows", "constructor"] as const;
    const version = fc
      .tuple(fc.nat(3), fc.nat(12), fc.constantFrom("0", "00", "1", "x"))
      .map(([a, b, c]) => `${String(a)}.${String(b)}.${c}`);
    const image = fc.record({
      family: fc.constantFrom(...families),
      version,
      regions: fc.option(
        fc.subarray(["westeurope", "eastus", "northeurope"], { minLength: 1 }),
        { nil: undefined },
      ),
    });
    const member = fc.record({
      region: fc.constantFrom(...regions),
      families: fc.subarray([...families]),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(image, { selector: (i) => `${i.family}/${i.version}` }),
        fc.array(member, { maxLength: 5 }),
        fc.context(),
        (images, members, ctx) => {
          const offer: AvailableVersions = {
            kubernetes: [],
            nodeImages: images.map((i) =>
              i.regions === undefined
                ? { family: i.family, version: i.version }
                : { ...i, regions: i.regions },
            ),
          };
          const clusters = members.map((m, index) =>
            cluster(`c-${String(index)}`, {
              ...compact({ region: m.region }),
              nodePools: m.families.map((family, p) =>
                pool(`p${String(p)}`, family, "0"),
              ),
            }),
          );
          const expected = selectConsistentNodeImages(clusters, offer);
          const shuffled = selectConsistentNodeImages(
            [...clusters]
              .reverse()
              .map((c) => ({ ...c, nodePools: [...c.nodePools].reverse() })),
            { ...offer, nodeImages: [...offer.nodeImages].reverse() },
          );
          ctx.log(JSON.stringify(expected));
          expect(shuffled).toEqual(expected);
          expect(JSON.stringify(shuffled)).toBe(JSON.stringify(expected)); // key order too
        },
      ),
    );
  });
});

describe("memberUpgradeDecision", () => {
  test("MinorVersionSkew: a member more than one minor below the target is skipped", () => {
    expect(
      memberUpgradeDecision(
        cluster("c-1", { kubernetesVersion: "1.28.3", region: "westeurope" }),
        full("1.31.2"),
        available,
      ),
    ).toEqual({
      action: "skip",
      reason: "MinorVersionSkew",
      message:
        'cluster "c-1" is on 1.28.3; 1.31.2 is more than one minor version ahead: upgrade one minor at a time',
    });
  });

  test("AheadOfTarget: a member newer than the target is skipped, never downgraded", () => {
    expect(
      memberUpgradeDecision(
        cluster("c-1", { kubernetesVersion: "1.31.3" }),
        full("1.31.2"),
        available,
      ),
    ).toEqual({
      action: "skip",
      reason: "AheadOfTarget",
      message:
        'cluster "c-1" is on 1.31.3, newer than the target 1.31.2: Kubernetes does not downgrade',
    });
    expect(
      memberUpgradeDecision(
        cluster("c-2", { kubernetesVersion: "1.32" }),
        full("1.31.2"),
        available,
      ),
    ).toMatchObject({
      reason: "AheadOfTarget",
    });
  });

  test("AlreadyAtTarget (Full): control plane, pool kubelets and pool images all at target", () => {
    const member = cluster("c-1", {
      kubernetesVersion: "1.31.2",
      region: "westeurope",
      nodePools: [
        pool("p1", UBUNTU, "202603.08.0", "1.31.2"),
        pool("w1", WINDOWS, "20348.2582.240916"),
      ],
    });
    expect(memberUpgradeDecision(member, full("1.31.2"), available)).toEqual({
      action: "skip",
      reason: "AlreadyAtTarget",
      message:
        'cluster "c-1" is already on 1.31.2 with every node pool at its target image',
    });
  });

  test("Full on a member whose control plane is at target but a pool is behind upgrades that pool", () => {
    const imageBehind = cluster("c-1", {
      kubernetesVersion: "1.31.2",
      region: "westeurope",
      nodePools: [pool("p1", UBUNTU, "202603.01.0")],
    });
    expect(
      memberUpgradeDecision(imageBehind, full("1.31.2"), available),
    ).toEqual({
      action: "upgrade",
      kubernetesVersion: "1.31.2",
      nodeImages: [{ pool: "p1", from: "202603.01.0", to: "202603.08.0" }],
      message:
        'upgrade cluster "c-1" from 1.31.2 to 1.31.2; pool "p1" 202603.01.0 → 202603.08.0',
    });
    const kubeletBehind = cluster("c-2", {
      kubernetesVersion: "1.31.2",
      region: "westeurope",
      nodePools: [pool("p1", UBUNTU, "202603.08.0", "1.30.5")],
    });
    expect(
      memberUpgradeDecision(kubeletBehind, full("1.31.2"), available),
    ).toMatchObject({ action: "upgrade", nodeImages: [] });
  });

  test("AlreadyAtTarget (ControlPlaneOnly) looks at the control plane only", () => {
    const member = cluster("c-1", {
      kubernetesVersion: "1.31.2",
      nodePools: [pool("p1", UBUNTU, "1", "1.30.5")],
    });
    const payload: UpgradePayload = {
      type: "ControlPlaneOnly",
      kubernetesVersion: "1.31.2",
      nodeImageSelection: "Latest",
    };
    expect(memberUpgradeDecision(member, payload, available)).toEqual({
      action: "skip",
      reason: "AlreadyAtTarget",
      message: 'cluster "c-1" is already on 1.31.2',
    });
    const behind = cluster("c-2", {
      kubernetesVersion: "1.30.5",
      nodePools: [pool("p1", UBUNTU, "1")],
    });
    expect(memberUpgradeDecision(behind, payload, available)).toEqual({
      action: "upgrade",
      kubernetesVersion: "1.31.2",
      nodeImages: [],
      message: 'upgrade cluster "c-2" from 1.30.5 to 1.31.2',
    });
  });

  test("a member that reports no Kubernetes version, or only its minor, is upgraded", () => {
    expect(
      memberUpgradeDecision(cluster("c-1"), full("1.30.5"), available),
    ).toMatchObject({
      action: "upgrade",
      message: 'upgrade cluster "c-1" from an unreported version to 1.30.5',
    });
    expect(
      memberUpgradeDecision(
        cluster("c-2", { kubernetesVersion: "1.30" }),
        full("1.30.5"),
        available,
      ),
    ).toMatchObject({
      action: "upgrade",
      kubernetesVersion: "1.30.5",
    });
  });

  test("Latest: each pool gets the newest image offered in the member's own region", () => {
    const we = cluster("c-we", {
      region: "westeurope",
      kubernetesVersion: "1.30.5",
      nodePools: [pool("p1", UBUNTU, "202601.01.0")],
    });
    const eus = cluster("c-eus", {
      region: "eastus",
      kubernetesVersion: "1.30.5",
      nodePools: [pool("p1", UBUNTU, "202601.01.0")],
    });
    const none = cluster("c-x", {
      kubernetesVersion: "1.30.5",
      nodePools: [pool("p1", UBUNTU, "202601.01.0")],
    });
    const to = (c: Cluster): unknown => {
      const decision = memberUpgradeDecision(
        c,
        nodeImageOnly("Latest"),
        available,
      );
      return decision.action === "upgrade"
        ? decision.nodeImages[0]?.to
        : decision.reason;
    };
    expect([to(we), to(eus), to(none)]).toEqual([
      "202603.08.0",
      "202603.01.0",
      "202602.15.0",
    ]);
  });

  test("Consistent: every member gets the run's selection, whatever its region offers", () => {
    const members = [
      cluster("c-we", {
        region: "westeurope",
        nodePools: [pool("p1", UBUNTU, "202601.01.0")],
      }),
      cluster("c-eus", {
        region: "eastus",
        nodePools: [pool("p1", UBUNTU, "202601.01.0")],
      }),
    ];
    const { selected } = selectConsistentNodeImages(members, available);
    const targets = members.map((m) => {
      const decision = memberUpgradeDecision(
        m,
        nodeImageOnly("Consistent"),
        available,
        selected,
      );
      return decision.action === "upgrade"
        ? decision.nodeImages
        : decision.reason;
    });
    expect(targets).toEqual([
      [{ pool: "p1", from: "202601.01.0", to: "202603.01.0" }],
      [{ pool: "p1", from: "202601.01.0", to: "202603.01.0" }],
    ]);
  });

  test("NoConsistentImage: a pool whose family had no version common to every member when the run was created", () => {
    const member = cluster("c-1", {
      region: "westeurope",
      kubernetesVersion: "1.30.5",
      nodePools: [
        pool("p1", UBUNTU, "202601.01.0"),
        pool("gpu", "AKSUbuntu-2204gen2gpu", "202601.01.0"),
      ],
    });
    const expected = {
      action: "skip",
      reason: "NoConsistentImage",
      message:
        'cluster "c-1": no version of image family "AKSUbuntu-2204gen2gpu" (node pool "gpu") was available to every member of the run when it was created; Consistent upgrades all members of a family to one common version',
    };
    const selected = { [UBUNTU]: "202603.01.0" };
    expect(
      memberUpgradeDecision(
        member,
        nodeImageOnly("Consistent"),
        available,
        selected,
      ),
    ).toEqual(expected);
    expect(
      memberUpgradeDecision(
        member,
        full("1.31.2", "Consistent"),
        available,
        selected,
      ),
    ).toEqual(expected);
  });

  test("Consistent without a selection from run start skips the member instead of guessing", () => {
    const member = cluster("c-1", { nodePools: [pool("p1", UBUNTU, "1")] });
    expect(
      memberUpgradeDecision(member, nodeImageOnly("Consistent"), available),
    ).toMatchObject({ reason: "NoConsistentImage" });
  });

  test("AlreadyAtTarget (NodeImageOnly): every pool at its target image; a newer pool is not downgraded", () => {
    const member = cluster("c-1", {
      region: "eastus",
      nodePools: [
        pool("p1", UBUNTU, "202603.01.0"),
        pool("p2", UBUNTU, "202612.01.0"),
      ],
    });
    expect(memberUpgradeDecision(member, nodeImageOnly(), available)).toEqual({
      action: "skip",
      reason: "AlreadyAtTarget",
      message:
        'cluster "c-1" has no node pool to upgrade: skipped upgrade of node pool(s) "p1" (already at 202603.01.0), "p2" (at 202612.01.0, newer than the target 202603.01.0)',
    });
    expect(
      memberUpgradeDecision(cluster("c-2"), nodeImageOnly(), available),
    ).toMatchObject({ reason: "AlreadyAtTarget" });
  });

  test("NodeImage: AKSWindows-2022-containerd 20348.2582.240716 → 20348.2582.240916", () => {
    const resolution = resolveChannel({ channel: "NodeImage" }, available);
    if (resolution.type === "skip") throw new Error(resolution.reason);
    const member = cluster("c-win", {
      region: "eastus",
      kubernetesVersion: "1.30.5",
      nodePools: [pool("win", WINDOWS, "20348.2582.240716")],
    });
    expect(
      memberUpgradeDecision(member, resolution.upgrade, available),
    ).toEqual({
      action: "upgrade",
      nodeImages: [
        { pool: "win", from: "20348.2582.240716", to: "20348.2582.240916" },
      ],
      message:
        'upgrade cluster "c-win": pool "win" 20348.2582.240716 → 20348.2582.240916',
    });
  });

  test("SecurityPatch updates Linux pools only and skips Windows-only members (NoLinuxNodePools)", () => {
    const resolution = resolveChannel({ channel: "SecurityPatch" }, available);
    if (resolution.type === "skip") throw new Error(resolution.reason);
    const mixed = cluster("c-mix", {
      region: "eastus",
      nodePools: [
        pool("lin", UBUNTU, "202602.15.0"),
        pool("win", WINDOWS, "20348.2582.240716"),
      ],
    });
    expect(
      memberUpgradeDecision(mixed, resolution.upgrade, available),
    ).toMatchObject({
      action: "upgrade",
      nodeImages: [{ pool: "lin", from: "202602.15.0", to: "202603.01.0" }],
    });
    const windowsOnly = cluster("c-win", {
      nodePools: [pool("win", WINDOWS, "20348.2582.240716")],
    });
    expect(
      memberUpgradeDecision(windowsOnly, resolution.upgrade, available),
    ).toEqual({
      action: "skip",
      reason: "NoLinuxNodePools",
      message:
        'cluster "c-win" has only Windows node pools: security patches apply to Linux pools only',
    });
  });

  test("an invalid payload built without upgradeField is a programming error", () => {
    expect(() =>
      memberUpgradeDecision(cluster("c-1"), full("1.31"), available),
    ).toThrow(FlotillaError);
  });
});

describe("isTargetAvailable", () => {
  test("a Kubernetes target offered in the member's region is available", () => {
    expect(
      isTargetAvailable(
        cluster("c-1", { region: "westeurope" }),
        full("1.31.2"),
        available,
      ),
    ).toBeUndefined();
    expect(
      isTargetAvailable(cluster("c-2"), full("1.30.5"), available),
    ).toBeUndefined();
  });

  test("a target not yet offered in the member's region makes it Pending with a message", () => {
    expect(
      isTargetAvailable(
        cluster("c-1", { region: "eastus" }),
        full("1.31.2"),
        available,
      ),
    ).toBe(
      'Kubernetes 1.31.2 is not yet available in region "eastus" of cluster "c-1"',
    );
    expect(isTargetAvailable(cluster("c-2"), full("1.31.2"), available)).toBe(
      'Kubernetes 1.31.2 is not yet available in cluster "c-2" (which reports no region)',
    );
    expect(
      isTargetAvailable(
        cluster("c-3", { region: "westeurope" }),
        full("1.32.0"),
        available,
      ),
    ).toBe("Kubernetes 1.32.0 is not yet available");
  });

  test("Consistent images must be offered in the member's region; Latest always has a target", () => {
    const member = cluster("c-1", {
      region: "northeurope",
      nodePools: [pool("p1", UBUNTU, "1")],
    });
    expect(
      isTargetAvailable(member, nodeImageOnly("Consistent"), available, {
        [UBUNTU]: "202603.01.0",
      }),
    ).toBe(
      `node image ${UBUNTU} 202603.01.0 is not yet available in region "northeurope" of cluster "c-1"`,
    );
    expect(
      isTargetAvailable(member, nodeImageOnly("Consistent"), available, {
        [UBUNTU]: "202602.15.0",
      }),
    ).toBeUndefined();
    expect(
      isTargetAvailable(member, nodeImageOnly("Latest"), available),
    ).toBeUndefined();
  });
});
