/**
 * Auto-upgrade profiles on a test hub over real gRPC, with releases published to its version
 * catalogue (AddRelease): CRUD and the
 * bad input that stores nothing; the trigger making and starting exactly one run per target (with
 * its origin and audit record), never for a disabled profile, never touching runs once made; and
 * GenerateUpdateRun returning the same run when asked twice.
 */
import { describe, expect, it } from "vitest";
import { profileRunName, resolveProfileTarget } from "@flotilla/core";
import { callUnary, type wire } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { defineCollection } from "../src/store/state-store.js";
import type { ScriptedAgent } from "./scripted-agent.js";
import { reportUpgrade, stagedFacts } from "./staged-fleet.js";
import { useHubWithAgents } from "./support/hub-with-agents.js";

const fixture = useHubWithAgents();

async function release(
  kind: "RELEASE_KIND_NODE_IMAGE" | "RELEASE_KIND_KUBERNETES",
  versions: readonly string[],
): Promise<void> {
  for (const version of versions) {
    await callUnary(fixture.hub.admin, "addRelease", {
      kind,
      family: kind === "RELEASE_KIND_NODE_IMAGE" ? "ubuntu" : "",
      version,
      reason: "",
    });
  }
}

/** Publishes node images of the fleet's family "ubuntu"; the catalogue tells the trigger. */
function images(...versions: string[]): Promise<void> {
  return release("RELEASE_KIND_NODE_IMAGE", versions);
}

/** Publishes Kubernetes versions (every cluster may take them). */
function kubernetes(...versions: string[]): Promise<void> {
  return release("RELEASE_KIND_KUBERNETES", versions);
}

function spec(
  fields: Partial<wire.AutoUpgradeProfileSpec>,
): wire.AutoUpgradeProfileSpec {
  return { channel: "NodeImage", ...fields };
}

async function createProfile(
  name: string,
  fields: Partial<wire.AutoUpgradeProfileSpec>,
): Promise<wire.AutoUpgradeProfile__Output> {
  const answer = await callUnary(
    fixture.hub.admin,
    "createAutoUpgradeProfile",
    {
      name,
      spec: spec(fields),
      reason: "test",
    },
  );
  if (answer.profile === null) throw new Error("no profile in the answer");
  return answer.profile;
}

/** The runs the hub holds that `profile` made, by name. */
function runsOf(profile: string): string[] {
  return fixture.hub.hub.runs
    .list()
    .filter((r) => r.run.origin?.profile === profile)
    .map((r) => r.run.name);
}

async function fleet(): Promise<ScriptedAgent[]> {
  return [
    await fixture.register("c-1", stagedFacts({ ring: "a" })),
    await fixture.register("c-2", stagedFacts({ ring: "b" })),
  ];
}

/**
 * Publishes 1.30.2 and the LTS patch 1.27.102 (1.27 is past standard support), and generates the
 * run of a disabled TargetKubernetesVersion 1.27 profile with longTermSupport.
 */
async function generateLtsRun(): Promise<wire.GenerateUpdateRunResponse__Output> {
  await kubernetes("1.30.2");
  await callUnary(fixture.hub.admin, "addRelease", {
    kind: "RELEASE_KIND_KUBERNETES",
    family: "",
    version: "1.27.102",
    lts: true,
    reason: "",
  });
  await createProfile("lts", {
    channel: "TargetKubernetesVersion",
    targetKubernetesVersion: "1.27",
    longTermSupport: true,
    disabled: true,
  });
  return callUnary(fixture.hub.admin, "generateUpdateRun", {
    profile: "lts",
    reason: "",
  });
}

describe("auto-upgrade profiles: admin API", () => {
  it("creates, lists, updates and deletes a profile, showing its current target", async () => {
    await fleet();
    await images("2024.02.01");
    const created = await createProfile("images", { disabled: true });
    expect(created.spec).toMatchObject({
      channel: "NodeImage",
      nodeImageSelection: "Latest",
      disabled: true,
      strategy: "",
    });
    expect(created.current?.description).toBe("ubuntu 2024.02.01");
    expect(created.current?.run).toMatch(/^images-img-[0-9a-f]{8}$/);
    const admin = fixture.hub.admin;
    await callUnary(admin, "createUpdateStrategy", {
      name: "rings",
      strategyJson: JSON.stringify({
        stages: [{ name: "all", memberSelector: { byLabel: "" } }],
      }),
      reason: "",
    });
    const updated = await callUnary(admin, "updateAutoUpgradeProfile", {
      name: "images",
      spec: spec({
        strategy:
          "/subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/fleets/f/updateStrategies/rings",
        nodeImageSelection: "Consistent",
        disabled: true,
      }),
      expectedRevision: created.revision,
      reason: "",
    });
    expect(updated.profile?.spec?.strategy).toBe("rings");
    expect(updated.profile?.spec?.nodeImageSelection).toBe("Consistent");
    const listed = await callUnary(admin, "listAutoUpgradeProfiles", {});
    expect(listed.profiles.map((p) => p.name)).toEqual(["images"]);
    await callUnary(admin, "deleteAutoUpgradeProfile", {
      name: "images",
      reason: "",
    });
    await expect(
      callUnary(admin, "getAutoUpgradeProfile", { name: "images" }),
    ).rejects.toMatchObject({ code: "not_found" });
  });

  it.each([
    ["a missing strategy", "p", { strategy: "nope" }, "spec.strategy", "nope"],
    [
      "longTermSupport with Rapid",
      "p",
      { channel: "Rapid", longTermSupport: true },
      "spec.longTermSupport",
      true,
    ],
    [
      "targetKubernetesVersion with Stable",
      "p",
      { channel: "Stable", targetKubernetesVersion: "1.30" },
      "spec.targetKubernetesVersion",
      "1.30",
    ],
    [
      "a malformed version",
      "p",
      { channel: "TargetKubernetesVersion", targetKubernetesVersion: "1.30.x" },
      "spec.targetKubernetesVersion",
      "1.30.x",
    ],
    [
      "an unknown channel",
      "p",
      { channel: "Weekly" },
      "spec.channel",
      "Weekly",
    ],
    ["a bad name", "Bad_Name", {}, "name", "Bad_Name"],
  ] as const)(
    "refuses %s with INVALID_ARGUMENT at the field, storing nothing",
    async (_label, name, fields, path, value) => {
      await expect(
        callUnary(fixture.hub.admin, "createAutoUpgradeProfile", {
          name,
          spec: spec(fields),
          reason: "",
        }),
      ).rejects.toMatchObject({
        code: "invalid_argument",
        problems: [expect.objectContaining({ path, value })],
      });
      const stored = await fixture.hub.store.list(
        defineCollection("auto-upgrade-profiles", (v) => v),
      );
      expect(stored).toEqual([]);
    },
  );
});

describe("auto-upgrade profiles: the trigger", () => {
  it("makes and starts exactly one run per new target, with its origin and audit record", async () => {
    await fleet();
    await createProfile("images", {});
    await images("2024.02.01");
    await waitFor(() => runsOf("images").length === 1, {
      message: "the profile's run",
    });
    const [first = ""] = runsOf("images");
    await waitFor(
      () => fixture.hub.hub.runs.get(first).run.state !== "NotStarted",
    );
    const { run } = fixture.hub.hub.runs.get(first);
    expect(run.origin).toEqual({
      profile: "images",
      channel: "NodeImage",
      target: "ubuntu 2024.02.01",
      createdBy: "hub",
    });
    expect(run.payload).toEqual({
      kind: "upgrade",
      upgrade: { type: "NodeImageOnly", nodeImageSelection: "Latest" },
    });

    // The same release again, and one that does not move the target: no second run.
    await images("2024.02.01");
    await images("2024.01.15");
    await fixture.hub.hub.autoUpgrade.idle();
    expect(runsOf("images")).toEqual([first]);

    const page = await fixture.hub.audit.list({ targetName: first });
    expect(
      page.events.map((e) => [e.actor.startsWith("hub/"), e.message]),
    ).toEqual([
      [
        true,
        "Created by auto-upgrade profile images (channel NodeImage, target ubuntu 2024.02.01)",
      ],
      [
        true,
        "Started by auto-upgrade profile images (channel NodeImage, target ubuntu 2024.02.01)",
      ],
    ]);
    const profile = await callUnary(
      fixture.hub.admin,
      "getAutoUpgradeProfile",
      {
        name: "images",
      },
    );
    expect(profile.profile?.lastRun).toBe(first);
  });

  it("makes a profile's next run only once its run in flight is done, for the newest target", async () => {
    const agents = await fleet();
    await createProfile("rapid", { channel: "Rapid" });
    await kubernetes("1.30.2");
    await waitFor(() => runsOf("rapid").length === 1);
    const first = fixture.hub.hub.runs.get("rapid-1-30-2");
    await waitFor(() => first.run.state === "Running", {
      message: "the first run started",
    });
    await kubernetes("1.30.2", "1.30.3");
    await kubernetes("1.30.2", "1.30.3", "1.30.4");
    await fixture.hub.hub.autoUpgrade.idle();
    expect(runsOf("rapid")).toEqual(["rapid-1-30-2"]);
    const waiting = await callUnary(
      fixture.hub.admin,
      "getAutoUpgradeProfile",
      {
        name: "rapid",
      },
    );
    expect(waiting.profile?.current).toEqual({
      description: "1.30.4",
      run: "rapid-1-30-4",
      skipReason: "",
      waitingFor: "rapid-1-30-2",
    });
    for (const [i, agent] of agents.entries()) {
      await reportUpgrade(
        fixture.hub,
        agent,
        `c-${String(i + 1)}`,
        1,
        "STATUS_PHASE_READY",
      );
    }
    await waitFor(() => runsOf("rapid").length === 2, {
      message: "the next run, once the first is done",
    });
    expect(runsOf("rapid")).toEqual(["rapid-1-30-2", "rapid-1-30-4"]);
    expect(fixture.hub.hub.runs.get("rapid-1-30-2").run.state).toBe(
      "Completed",
    );
  });

  it("never moves a cluster across two minors: a member two minors behind the target is skipped", async () => {
    await fleet();
    await fixture.register("old-1", {
      ...stagedFacts({ ring: "a" }),
      kubernetesVersion: "1.28.9",
    });
    await createProfile("rapid", { channel: "Rapid" });
    await kubernetes("1.30.2");
    await waitFor(() => runsOf("rapid").length === 1);
    const { run } = fixture.hub.hub.runs.get("rapid-1-30-2");
    await waitFor(() => run.state === "Running");
    const members = run.stages.flatMap((s) =>
      s.groups.flatMap((g) => g.members),
    );
    expect(members.map((m) => [m.name, m.state, m.reason ?? ""])).toEqual([
      ["c-1", "Running", ""],
      ["c-2", "Running", ""],
      ["old-1", "Skipped", "MinorVersionSkew"],
    ]);
  });

  it("makes no run for a disabled profile; disabling or deleting one leaves its runs alone", async () => {
    await fleet();
    await createProfile("images", { disabled: true });
    await images("2024.02.01");
    await fixture.hub.hub.autoUpgrade.idle();
    expect(runsOf("images")).toEqual([]);

    const admin = fixture.hub.admin;
    await callUnary(admin, "updateAutoUpgradeProfile", {
      name: "images",
      spec: spec({}),
      reason: "",
    });
    await waitFor(() => runsOf("images").length === 1);
    const [name = ""] = runsOf("images");
    await waitFor(
      () => fixture.hub.hub.runs.get(name).run.state !== "NotStarted",
    );
    const before = fixture.hub.hub.runs.get(name).revision;
    await callUnary(admin, "updateAutoUpgradeProfile", {
      name: "images",
      spec: spec({ disabled: true }),
      reason: "",
    });
    await callUnary(admin, "deleteAutoUpgradeProfile", {
      name: "images",
      reason: "",
    });
    await fixture.hub.hub.autoUpgrade.idle();
    await fixture.hub.hub.runs.idle();
    expect(fixture.hub.hub.runs.get(name).revision).toBe(before);
    // A new image makes no run once the profile is gone.
    await images("2024.03.01");
    await fixture.hub.hub.autoUpgrade.idle();
    expect(runsOf("images")).toEqual([name]);
  });

  it("GenerateUpdateRun makes the run unstarted and returns it again; the trigger then leaves it to the operator", async () => {
    await fleet();
    await images("2024.02.01");
    await createProfile("images", { disabled: true });
    const admin = fixture.hub.admin;
    const first = await callUnary(admin, "generateUpdateRun", {
      profile: "images",
      reason: "",
    });
    expect(first.created).toBe(true);
    expect(first.run?.state).toBe("RUN_STATE_NOT_STARTED");
    expect(first.run?.origin?.createdBy).toBe("generate");
    const again = await callUnary(admin, "generateUpdateRun", {
      profile: "images",
      reason: "",
    });
    expect(again.created).toBe(false);
    expect(again.run?.name).toBe(first.run?.name);

    await callUnary(admin, "updateAutoUpgradeProfile", {
      name: "images",
      spec: spec({}),
      reason: "",
    });
    await fixture.hub.hub.autoUpgrade.idle();
    const profile = await callUnary(admin, "getAutoUpgradeProfile", {
      name: "images",
    });
    expect(profile.profile?.lastRun).toBe(first.run?.name);
    expect(runsOf("images")).toEqual([first.run?.name]);
    expect(fixture.hub.hub.runs.get(first.run?.name ?? "").run.state).toBe(
      "NotStarted",
    );
  });

  it("starts a run the hub made but had not started (a pass cut short), without making another", async () => {
    await fleet();
    await images("2024.02.01");
    await createProfile("images", { disabled: true });
    const resolved = resolveProfileTarget(
      { channel: "NodeImage", nodeImageSelection: "Latest", disabled: false },
      fixture.hub.hub.catalogue.available(),
      fixture.hub.hub.registry.clusters(),
    );
    if (resolved.type !== "target") throw new Error("expected a target");
    const name = profileRunName("images", resolved.target);
    await fixture.hub.hub.runs.create({
      name,
      payload: { kind: "upgrade", upgrade: resolved.target.upgrade },
      origin: {
        profile: "images",
        channel: "NodeImage",
        target: resolved.target.description,
        createdBy: "hub",
      },
    });
    await callUnary(fixture.hub.admin, "updateAutoUpgradeProfile", {
      name: "images",
      spec: spec({}),
      reason: "",
    });
    await waitFor(
      () => fixture.hub.hub.runs.get(name).run.state !== "NotStarted",
      {
        message: "the run started",
      },
    );
    expect(runsOf("images")).toEqual([name]);
  });

  it("GenerateUpdateRun without a target is FAILED_PRECONDITION with the channel's reason", async () => {
    await fleet();
    await createProfile("stable", { channel: "Stable", disabled: true });
    await kubernetes("1.30.2");
    await expect(
      callUnary(fixture.hub.admin, "generateUpdateRun", {
        profile: "stable",
        reason: "",
      }),
    ).rejects.toMatchObject({
      code: "failed_precondition",
      message: expect.stringContaining("Stable follows 1.29"),
    });
  });

  it("GenerateUpdateRun for a long-term-support target: the run requires it; at their turn the member without it fails (NoLongTermSupport, no intent), the LTS member upgrades", async () => {
    const lts = await fixture.register("lts-1", {
      ...stagedFacts({ ring: "a" }),
      kubernetesVersion: "1.27.9",
      supportPlan: "AKSLongTermSupport",
    });
    await fixture.register("std-1", {
      ...stagedFacts({ ring: "a" }),
      kubernetesVersion: "1.27.9",
    });
    const admin = fixture.hub.admin;
    const generated = await generateLtsRun();
    const name = generated.run?.name ?? "";
    expect(generated.run?.payload?.upgrade).toMatchObject({
      kubernetesVersion: "1.27.102",
      requiresLongTermSupport: true,
    });
    const { run } = fixture.hub.hub.runs.get(name);
    const members = () =>
      run.stages.flatMap((s) => s.groups.flatMap((g) => g.members));
    // Both wait at creation: the failure comes at the member's turn.
    expect(members().map((m) => m.state)).toEqual(["NotStarted", "NotStarted"]);
    await callUnary(admin, "startUpdateRun", { name, reason: "" });
    await waitFor(() => run.state === "Failed" || run.state === "Stopping");
    expect(members().map((m) => [m.name, m.state, m.reason ?? ""])).toEqual([
      ["lts-1", "Running", ""],
      ["std-1", "Failed", "NoLongTermSupport"],
    ]);
    expect(
      (await fixture.hub.hub.intents.current("std-1")).intent.upgrade,
    ).toBe(undefined);
    await reportUpgrade(fixture.hub, lts, "lts-1", 1, "STATUS_PHASE_READY");
    await waitFor(() => run.state === "Failed");
    expect(members().map((m) => m.state)).toEqual(["Succeeded", "Failed"]);
  });

  it("a cluster whose agent reports AKSLongTermSupport after the run was made takes the target at its turn", async () => {
    const facts = {
      ...stagedFacts({ ring: "a" }),
      kubernetesVersion: "1.27.9",
    };
    const late = await fixture.register("late-1", facts);
    const admin = fixture.hub.admin;
    const generated = await generateLtsRun();
    const name = generated.run?.name ?? "";
    const { run } = fixture.hub.hub.runs.get(name);
    const member = () => run.stages[0]?.groups[0]?.members[0];
    expect(member()?.supportPlan).toBeUndefined();
    late.send({ facts: { ...facts, supportPlan: "AKSLongTermSupport" } });
    await waitFor(() => member()?.supportPlan === "AKSLongTermSupport", {
      message: "the run hears of the new support plan",
    });
    await callUnary(admin, "startUpdateRun", { name, reason: "" });
    await waitFor(() => member()?.state === "Running");
    expect(
      (await fixture.hub.hub.intents.current("late-1")).intent.upgrade,
    ).toBeDefined();
  });
});
