/**
 * `flotilla plan --channel` (docs/plan-and-simulate.md): what an auto-upgrade channel resolves to
 * with a catalogue, through the same resolveChannel the auto-upgrade profiles use, and which
 * members upgrade, skip or would fail the generated run, and why.
 */
import { describe, expect, it } from "vitest";
import { planChannel, type ChannelPlanInputs } from "../src/channel-plan.js";
import type { ChannelPlanOutput } from "../src/preview-types.js";

// The AKS SDK's Stable example: from 1.17.7, with 1.17.9, 1.18.4, 1.18.6 and 1.19.1 offered.
const sdkCatalogue = {
  kubernetes: [
    { version: "1.17.9" },
    { version: "1.18.4" },
    { version: "1.18.6" },
    { version: "1.19.1" },
    { version: "1.20.0", preview: true },
  ],
};

const clusters = [
  { name: "at-1177", kubernetesVersion: "1.17.7" },
  { name: "at-1186", kubernetesVersion: "1.18.6" },
  { name: "at-1191", kubernetesVersion: "1.19.1" },
  { name: "at-1169", kubernetesVersion: "1.16.9" },
];

function planned(
  inputs: Partial<ChannelPlanInputs> & { profile: unknown },
): ChannelPlanOutput {
  const result = planChannel({
    clusters,
    catalogue: sdkCatalogue,
    ...inputs,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

const decisions = (out: ChannelPlanOutput) =>
  out.plan?.members.map((m) => [
    m.name,
    m.action,
    m.reason ?? m.kubernetesVersion,
  ]);

describe("channels resolved against a catalogue", () => {
  it("Stable takes the newest patch of minor N-1 (the AKS SDK example: 1.18.6); preview versions are never N", () => {
    const out = planned({ profile: { channel: "Stable" } });
    expect(out.upgrade).toEqual({
      type: "Full",
      kubernetesVersion: "1.18.6",
      nodeImageSelection: "Latest",
    });
    expect(out.channels).toEqual([
      {
        channel: "Rapid",
        upgrade: {
          type: "Full",
          kubernetesVersion: "1.19.1",
          nodeImageSelection: "Latest",
        },
      },
      {
        channel: "Stable",
        upgrade: {
          type: "Full",
          kubernetesVersion: "1.18.6",
          nodeImageSelection: "Latest",
        },
      },
      {
        channel: "NodeImage",
        upgrade: { type: "NodeImageOnly", nodeImageSelection: "Latest" },
      },
      {
        channel: "SecurityPatch",
        upgrade: {
          type: "NodeImageOnly",
          nodeImageSelection: "Latest",
          securityPatchOnly: true,
        },
      },
    ]);
  });

  it("members upgrade, or skip with the reason the run would give them", () => {
    const out = planned({ profile: { channel: "Stable" } });
    expect(decisions(out)).toEqual([
      ["at-1169", "skip", "MinorVersionSkew"],
      ["at-1177", "upgrade", "1.18.6"],
      ["at-1186", "skip", "AlreadyAtTarget"],
      ["at-1191", "skip", "AheadOfTarget"],
    ]);
    // Without a strategy, members go one by one, in name order.
    expect(out.plan?.members.map((m) => m.wave)).toEqual([
      "default",
      "default",
      "default",
      "default",
    ]);
  });

  it("TargetKubernetesVersion follows the latest patch of the given minor and never the next one", () => {
    const out = planned({
      profile: {
        channel: "TargetKubernetesVersion",
        targetKubernetesVersion: "1.17",
      },
    });
    expect(out.upgrade).toMatchObject({ kubernetesVersion: "1.17.9" });
    expect(out.channels.map((c) => c.channel)).toEqual([
      "Rapid",
      "Stable",
      "TargetKubernetesVersion",
      "NodeImage",
      "SecurityPatch",
    ]);
    expect(decisions(out)).toContainEqual(["at-1177", "upgrade", "1.17.9"]);
  });

  it("a channel that resolves to nothing says why and plans no member", () => {
    const out = planned({
      profile: {
        channel: "TargetKubernetesVersion",
        targetKubernetesVersion: "1.21",
      },
    });
    expect(out.upgrade).toBeUndefined();
    expect(out.reason).toBe("no GA patch of 1.21 is offered yet");
    expect(out.plan).toBeUndefined();
  });

  it("with a strategy, members are planned in its stages and groups; clusters no group takes are unassigned", () => {
    const out = planned({
      profile: { channel: "Rapid" },
      clusters: clusters.map((c) => ({
        ...c,
        updateGroup: c.name === "at-1169" ? undefined : "all",
      })),
      strategy: { stages: [{ name: "only", groups: [{ name: "all" }] }] },
    });
    expect(out.plan?.members.map((m) => [m.name, m.wave, m.group])).toEqual([
      ["at-1177", "only", "all"],
      ["at-1186", "only", "all"],
      ["at-1191", "only", "all"],
    ]);
    expect(out.unassigned).toEqual(["at-1169"]);
  });
});

describe("long-term support", () => {
  // Newest GA minor 1.30: standard support is 1.28–1.30; 1.27 is LTS only.
  const lts = {
    kubernetes: [
      { version: "1.27.15" },
      { version: "1.27.102", lts: true },
      { version: "1.28.9" },
      { version: "1.29.7" },
      { version: "1.30.3" },
    ],
  };
  const ltsClusters = [
    {
      name: "lts-1",
      kubernetesVersion: "1.27.15",
      supportPlan: "AKSLongTermSupport",
    },
    {
      name: "std-1",
      kubernetesVersion: "1.27.15",
      supportPlan: "KubernetesOfficial",
    },
    { name: "std-2", kubernetesVersion: "1.27.15" },
  ];

  it("a minor older than standard support without longTermSupport resolves to nothing, with the reason", () => {
    const out = planned({
      profile: {
        channel: "TargetKubernetesVersion",
        targetKubernetesVersion: "1.27",
      },
      catalogue: lts,
      clusters: ltsClusters,
    });
    expect(out.reason).toBe(
      "1.27 is older than standard support (1.28–1.30): set longTermSupport: true to follow an LTS minor",
    );
  });

  it("with longTermSupport it takes the newest LTS patch; clusters without LTS would fail the run, and a warning says so", () => {
    const out = planned({
      profile: {
        channel: "TargetKubernetesVersion",
        targetKubernetesVersion: "1.27",
        longTermSupport: true,
      },
      catalogue: lts,
      clusters: ltsClusters,
    });
    expect(out.upgrade).toMatchObject({ kubernetesVersion: "1.27.102" });
    expect(out.requiresLongTermSupport).toBe(true);
    expect(decisions(out)).toEqual([
      ["lts-1", "upgrade", "1.27.102"],
      ["std-1", "fail", "NoLongTermSupport"],
      ["std-2", "fail", "NoLongTermSupport"],
    ]);
    expect(out.plan?.members[1]?.message).toBe(
      'cluster "std-1" cannot take 1.27.102: it is past standard support and the cluster does not have long-term support enabled',
    );
    expect(out.warnings).toEqual([
      {
        code: "LongTermSupportRequired",
        message:
          "1.27.102 is past standard support: 2 cluster(s) without supportPlan AKSLongTermSupport would fail the run: std-1, std-2",
      },
    ]);
  });
});

describe("bad input", () => {
  it("reports the profile, catalogue and clusters problems together, each with its source and path", () => {
    const result = planChannel({
      clusters: [{ name: "c_1" }],
      catalogue: { kubernetes: [{ version: "1.30" }] },
      profile: { channel: "TargetKubernetesVersion" },
    });
    expect(
      !result.ok && result.problems.map((p) => [p.source, p.path, p.message]),
    ).toEqual([
      [
        "clusters",
        "[0].name",
        "must be a DNS label: lower-case letters, digits and '-', starting and ending alphanumeric",
      ],
      [
        "profile",
        "targetKubernetesVersion",
        'is required for channel TargetKubernetesVersion ("major.minor", e.g. "1.30")',
      ],
      [
        "catalogue",
        "kubernetes[0].version",
        'must be a version like "1.30.5": the patch number is required',
      ],
    ]);
  });

  it("a Fleet rollout strategy cannot carry an upgrade", () => {
    const result = planChannel({
      clusters,
      catalogue: sdkCatalogue,
      profile: { channel: "Rapid" },
      strategy: { rolloutStrategy: {} },
    });
    expect(!result.ok && result.problems).toEqual([
      {
        source: "strategy",
        path: "",
        message:
          "a Fleet rolloutStrategy rolls out bundle revisions; an auto-upgrade channel needs an update strategy with stages (or none: members one by one)",
      },
    ]);
  });

  it("a cluster's supportPlan must be one of AKS's values", () => {
    const result = planChannel({
      clusters: [{ name: "c-1", supportPlan: "LTS" }],
      catalogue: sdkCatalogue,
      profile: { channel: "Rapid" },
    });
    expect(
      !result.ok && result.problems.map((p) => [p.source, p.path, p.message]),
    ).toEqual([
      [
        "clusters",
        "[0].supportPlan",
        'must be one of "KubernetesOfficial", "AKSLongTermSupport"',
      ],
    ]);
  });
});
