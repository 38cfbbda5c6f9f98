/**
 * Node pools inside a member (docs/engine.md#node-pools-inside-a-member): the per-pool plan of an
 * upgrade says which pools get a new image and which are skipped and why, and the member's
 * messages carry it to the end, like AKS's "Skipped upgrade of following agent pool(s)".
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { NodePool } from "../src/cluster.js";
import { simulate } from "../src/simulate.js";
import type { RunPayload } from "../src/staged/run.js";
import { step } from "../src/staged/step.js";
import { memberUpgradeDecision } from "../src/upgrade.js";
import { compareNodeImageVersions } from "../src/versions/version.js";
import type { AvailableVersions } from "../src/versions/version.js";
import { cluster, member, resolve, T0, MINUTE } from "./staged-fixtures.js";
import { compact } from "../src/compact.js";

const UBUNTU = "AKSUbuntu-2204gen2containerd";
const AZURE_LINUX = "AzureLinuxContainerHost";
const WINDOWS = "AKSWindows-2022-containerd";

const available: AvailableVersions = {
  kubernetes: [{ version: "1.31.2" }],
  nodeImages: [
    { family: UBUNTU, version: "2026.10.0" },
    { family: UBUNTU, version: "2026.11.0" },
    { family: WINDOWS, version: "20348.2" },
    { family: AZURE_LINUX, version: "3.0.9", regions: ["eastus"] },
  ],
};

const pool = (name: string, imageFamily: string, imageVersion: string) =>
  ({ name, imageFamily, imageVersion }) satisfies NodePool;

const nodeImageOnly: RunPayload = {
  kind: "upgrade",
  upgrade: { type: "NodeImageOnly", nodeImageSelection: "Latest" },
};

describe("the per-pool plan of a member", () => {
  it("lists the pools it upgrades and the pools it skips, each with its reason", () => {
    const c = cluster("c-1", {
      region: "westeurope",
      nodePools: [
        pool("a", UBUNTU, "2026.10.0"),
        pool("b", UBUNTU, "2026.11.0"),
        pool("c", UBUNTU, "2027.01.0"),
        pool("d", AZURE_LINUX, "3.0.1"),
      ],
    });
    expect(memberUpgradeDecision(c, nodeImageOnly.upgrade, available)).toEqual({
      action: "upgrade",
      nodeImages: [{ pool: "a", from: "2026.10.0", to: "2026.11.0" }],
      skippedNodeImages: [
        { pool: "b", version: "2026.11.0", reason: "AlreadyAtTarget" },
        {
          pool: "c",
          version: "2027.01.0",
          reason: "AheadOfTarget",
          target: "2026.11.0",
        },
        {
          pool: "d",
          version: "3.0.1",
          reason: "NotOffered",
          imageFamily: AZURE_LINUX,
          region: "westeurope",
        },
      ],
      message:
        'upgrade cluster "c-1": pool "a" 2026.10.0 → 2026.11.0; skipped upgrade of node pool(s) "b" (already at 2026.11.0), "c" (at 2027.01.0, newer than the target 2026.11.0), "d" (no AzureLinuxContainerHost image is offered in region "westeurope")',
    });
  });

  it("names the Windows pools a security-patch upgrade leaves alone", () => {
    const c = cluster("c-1", {
      nodePools: [pool("lin", UBUNTU, "2026.10.0"), pool("win", WINDOWS, "1")],
    });
    const decision = memberUpgradeDecision(
      c,
      {
        type: "NodeImageOnly",
        nodeImageSelection: "Latest",
        securityPatchOnly: true,
      },
      available,
    );
    expect(decision).toMatchObject({
      action: "upgrade",
      skippedNodeImages: [{ pool: "win", version: "1", reason: "LinuxOnly" }],
    });
    expect(decision.message).toContain(
      'skipped upgrade of node pool(s) "win" (Windows: security patches are for Linux pools only)',
    );
  });

  it("says why each pool is skipped when the whole member is", () => {
    const c = cluster("c-1", {
      region: "westeurope",
      nodePools: [pool("b", UBUNTU, "2026.11.0"), pool("d", AZURE_LINUX, "3")],
    });
    expect(memberUpgradeDecision(c, nodeImageOnly.upgrade, available)).toEqual({
      action: "skip",
      reason: "AlreadyAtTarget",
      message:
        'cluster "c-1" has no node pool to upgrade: skipped upgrade of node pool(s) "b" (already at 2026.11.0), "d" (no AzureLinuxContainerHost image is offered in region "westeurope")',
    });
  });

  it("leaves the decision as it was when no pool is skipped", () => {
    const decision = memberUpgradeDecision(
      cluster("c-1", { nodePools: [pool("a", UBUNTU, "2026.10.0")] }),
      nodeImageOnly.upgrade,
      available,
    );
    expect(decision).toEqual({
      action: "upgrade",
      nodeImages: [{ pool: "a", from: "2026.10.0", to: "2026.11.0" }],
      message: 'upgrade cluster "c-1": pool "a" 2026.10.0 → 2026.11.0',
    });
  });
});

describe("the per-pool plan, for any pools and offers", () => {
  const version = fc
    .tuple(
      fc.integer({ min: 2025, max: 2027 }),
      fc.integer({ min: 1, max: 12 }),
    )
    .map(([y, m]) => `${String(y)}.${String(m).padStart(2, "0")}.0`);
  const family = fc.constantFrom(UBUNTU, AZURE_LINUX, WINDOWS);
  const pools = fc.uniqueArray(
    fc.record({
      name: fc.constantFrom("a", "b", "c", "d", "e"),
      imageFamily: family,
      imageVersion: version,
    }),
    { selector: (p) => p.name, minLength: 1 },
  );
  const offers = fc.array(
    fc.record({
      family,
      version,
      regions: fc.constantFrom(undefined, ["westeurope"], ["eastus"]),
    }),
  );

  it("puts every pool either in the changes (never a downgrade) or in the skipped list, once", () => {
    fc.assert(
      fc.property(
        pools,
        offers,
        fc.boolean(),
        (nodePools, images, securityPatchOnly) => {
          const offered: AvailableVersions = {
            kubernetes: [],
            nodeImages: images.map((i) =>
              i.regions === undefined
                ? { family: i.family, version: i.version }
                : i,
            ),
          };
          const decision = memberUpgradeDecision(
            cluster("c-1", { region: "westeurope", nodePools }),
            {
              type: "NodeImageOnly",
              nodeImageSelection: "Latest",
              ...(securityPatchOnly ? { securityPatchOnly } : {}),
            },
            offered,
          );
          if (decision.action === "skip") {
            expect(["AlreadyAtTarget", "NoLinuxNodePools"]).toContain(
              decision.reason,
            );
            return;
          }
          // Long-term support is about Kubernetes minors: a node-image upgrade never fails a member.
          expect(decision.action).toBe("upgrade");
          if (decision.action !== "upgrade") return;
          const changed = decision.nodeImages.map((c) => c.pool);
          const skipped = (decision.skippedNodeImages ?? []).map((s) => s.pool);
          expect([...changed, ...skipped].sort()).toEqual(
            nodePools.map((p) => p.name).sort(),
          );
          for (const c of decision.nodeImages)
            expect(compareNodeImageVersions(c.to, c.from)).toBeGreaterThan(0);
        },
      ),
    );
  });
});

describe("the member's message in a run", () => {
  const pools = [
    pool("a", UBUNTU, "2026.10.0"),
    pool("b", UBUNTU, "2026.11.0"),
  ];

  function started(payload: RunPayload, kubernetesVersion?: string) {
    const run = resolve(
      undefined,
      [
        cluster("c-1", {
          nodePools: pools,
          ...compact({ kubernetesVersion }),
        }),
      ],
      { payload, available },
    );
    step(run, { type: "StartRun" }, T0);
    expect(member(run, "c-1").state).toBe("Running");
    return run;
  }

  it.each([
    [
      "NodeImageOnly, nothing reported",
      nodeImageOnly,
      undefined,
      undefined,
      'Upgraded node pool(s) "a" 2026.10.0 → 2026.11.0; skipped upgrade of node pool(s) "b" (already at 2026.11.0)',
    ],
    [
      "NodeImageOnly, the agent's own words",
      nodeImageOnly,
      undefined,
      'Upgraded node pool "a" to image 2026.11.0',
      'Upgraded node pool "a" to image 2026.11.0; skipped upgrade of node pool(s) "b" (already at 2026.11.0)',
    ],
    [
      "Full, nothing reported",
      {
        kind: "upgrade",
        upgrade: {
          type: "Full",
          kubernetesVersion: "1.31.2",
          nodeImageSelection: "Latest",
        },
      } satisfies RunPayload,
      "1.30.5",
      undefined,
      'Upgraded to Kubernetes 1.31.2; upgraded the node image of node pool(s) "a" 2026.10.0 → 2026.11.0; kept the node image of node pool(s) "b" (already at 2026.11.0)',
    ],
  ] as const)(
    "%s: Succeeded says which pools were upgraded and which skipped",
    (_what, payload, kubernetesVersion, reported, expected) => {
      const run = started(payload, kubernetesVersion);
      step(
        run,
        {
          type: "MemberSucceeded",
          member: "c-1",
          ...compact({ message: reported }),
        },
        T0 + 10 * MINUTE,
      );
      expect(member(run, "c-1")).toMatchObject({
        state: "Succeeded",
        message: expected,
      });
    },
  );

  it("keeps the agent's message, or Succeeded, when no pool is skipped", () => {
    const run = resolve(
      undefined,
      [cluster("c-1", { nodePools: [pool("a", UBUNTU, "2026.10.0")] })],
      { payload: nodeImageOnly, available },
    );
    step(run, { type: "StartRun" }, T0);
    expect(member(run, "c-1").target?.nodeImages).toEqual([
      { pool: "a", from: "2026.10.0", to: "2026.11.0" },
    ]);
    step(run, { type: "MemberSucceeded", member: "c-1" }, T0 + MINUTE);
    expect(member(run, "c-1").message).toBe("Succeeded");
  });

  it("keeps the agent's message, or Succeeded, when the upgrade touches no node image", () => {
    const run = resolve(
      undefined,
      [cluster("c-1", { kubernetesVersion: "1.30.5", nodePools: pools })],
      {
        payload: {
          kind: "upgrade",
          upgrade: {
            type: "ControlPlaneOnly",
            kubernetesVersion: "1.31.2",
            nodeImageSelection: "Latest",
          },
        },
        available,
      },
    );
    step(run, { type: "StartRun" }, T0);
    step(run, { type: "MemberSucceeded", member: "c-1" }, T0 + MINUTE);
    expect(member(run, "c-1").message).toBe("Succeeded");
  });
});

describe("flotilla simulate", () => {
  it("shows the per-pool plan in the member's final message and the succeeded timeline entry", () => {
    const result = simulate({
      clusters: [
        {
          name: "c-1",
          updateGroup: "all",
          region: "westeurope",
          nodePools: [
            { name: "a", imageFamily: UBUNTU, imageVersion: "2026.10.0" },
            { name: "b", imageFamily: UBUNTU, imageVersion: "2026.11.0" },
          ],
        },
      ],
      strategy: { stages: [{ name: "s", groups: [{ name: "all" }] }] },
      scenario: {
        start: "2026-03-02T10:00:00Z",
        kind: "upgrade",
        upgrade: { type: "NodeImageOnly" },
        available,
      },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const expected =
      'Upgraded node pool(s) "a" 2026.10.0 → 2026.11.0; skipped upgrade of node pool(s) "b" (already at 2026.11.0)';
    expect(result.value.waves[0]?.groups[0]?.members[0]).toMatchObject({
      name: "c-1",
      state: "Succeeded",
      message: expected,
    });
    expect(
      result.value.timeline.find((e) => e.type === "succeeded")?.message,
    ).toBe(expected);
  });
});
