/**
 * Maintenance windows in staged runs (docs/semantics.md#order-and-concurrency,
 * docs/semantics.md#upgrades, docs/semantics.md#maintenance-windows): the order of members inside a
 * group by window category, Pending members with the next opening, Pending roll-up to group, stage
 * and run, and members starting when their window opens.
 */
import { describe, expect, it } from "vitest";
import {
  HOUR,
  MINUTE,
  T0,
  at,
  cluster,
  fullUpgrade,
  group,
  member,
  oneOff,
  oneStage,
  resolve,
  running,
  stage,
  started,
  windows,
} from "./staged-fixtures.js";

/** T0 is Monday 2026-03-02 10:00 UTC. */
const mondayMorning = windows({
  workloads: {
    schedule: { weekly: { dayOfWeek: "Monday" } },
    startTime: "08:00",
    durationHours: 4,
  },
});
const fridayNight = windows({
  workloads: {
    schedule: { weekly: { dayOfWeek: "Friday" } },
    startTime: "02:00",
    durationHours: 4,
  },
});

describe("member order by maintenance window (docs/semantics.md#order-and-concurrency)", () => {
  it("open window first, then (reached but Pending) opening within 4 hours inclusive, then no window, then closed windows (Pending when reached)", () => {
    const run = resolve(oneStage([{ name: "g" }]), [
      cluster("a-closed", { updateGroup: "g", maintenance: fridayNight }),
      // Opens 4 hours and one minute from now: closed, not "opening soon".
      cluster("b-later", {
        updateGroup: "g",
        maintenance: oneOff(T0 + 4 * HOUR + MINUTE, T0 + 8 * HOUR),
      }),
      cluster("c-none", { updateGroup: "g" }),
      // Opens exactly 4 hours from now: the boundary is inclusive.
      cluster("d-soon", {
        updateGroup: "g",
        maintenance: oneOff(T0 + 4 * HOUR, T0 + 8 * HOUR),
      }),
      cluster("e-open", { updateGroup: "g", maintenance: mondayMorning }),
    ]);
    const { d, first } = started(run);
    expect(first).toEqual(["e-open"]);
    expect(member(run, "d-soon")).toMatchObject({
      state: "Pending",
      reason: "MaintenanceWindow",
      message:
        "Maintenance window for workloads closed until 2026-03-02T14:00:00Z",
    });
    // Closed windows are not reached while something else can start.
    expect([
      member(run, "a-closed").state,
      member(run, "b-later").state,
      member(run, "c-none").state,
    ]).toEqual(["NotStarted", "NotStarted", "NotStarted"]);

    expect(d.succeed("e-open")).toEqual(["c-none"]);
    expect(d.succeed("c-none")).toEqual([]);
    expect(member(run, "a-closed")).toMatchObject({
      state: "Pending",
      message:
        "Maintenance window for workloads closed until 2026-03-06T02:00:00Z",
    });
    expect(member(run, "b-later")).toMatchObject({
      state: "Pending",
      message:
        "Maintenance window for workloads closed until 2026-03-02T14:01:00Z",
    });

    // Everything left is Pending: so are the group, the stage and the run; the run wakes at the first opening.
    expect([
      group(run, "g").state,
      stage(run, "stage-1").state,
      run.state,
    ]).toEqual(["Pending", "Pending", "Pending"]);
    expect(group(run, "g").message).toMatch(/^3 members pending; /);
    expect(run.message).toBe(
      'Stage "stage-1": All unfinished groups are pending',
    );
    expect(run.wakeAtMs).toBe(T0 + 4 * HOUR);

    expect(d.tick()).toEqual(["d-soon"]);
    expect(d.now).toBe(at("2026-03-02T14:00:00Z"));
    expect(run.state).toBe("Running");
    // b-later opens at 14:01 while the only slot is taken; it starts when the slot frees.
    expect(d.tick(at("2026-03-02T14:01:00Z"))).toEqual([]);
    expect(d.succeed("d-soon")).toEqual(["b-later"]);
    d.succeed("b-later");
    expect(run.state).toBe("Pending");
    expect(run.wakeAtMs).toBe(at("2026-03-06T02:00:00Z"));
    expect(d.tick()).toEqual(["a-closed"]);
    d.succeed("a-closed");
    expect(run.state).toBe("Completed");
  });

  it("members of the same category go by name, and members without windows keep their name order", () => {
    const run = resolve(oneStage([{ name: "g", maxConcurrency: 4 }]), [
      cluster("z-open", { updateGroup: "g", maintenance: mondayMorning }),
      cluster("b-none", { updateGroup: "g" }),
      cluster("a-open", { updateGroup: "g", maintenance: mondayMorning }),
      cluster("a-none", { updateGroup: "g" }),
    ]);
    expect(started(run).first).toEqual([
      "a-open",
      "z-open",
      "a-none",
      "b-none",
    ]);
  });

  it("the order is re-evaluated whenever a slot frees: a window that was closed becomes 'opening soon' and is reached first", () => {
    const run = resolve(
      oneStage([{ name: "g" }]),
      [
        // Opens at 15:00, five hours after T0: closed at first, within four hours from 11:00.
        cluster("m-window", {
          updateGroup: "g",
          maintenance: oneOff(T0 + 5 * HOUR, T0 + 9 * HOUR),
        }),
        cluster("x-1", { updateGroup: "g" }),
        cluster("x-2", { updateGroup: "g" }),
      ],
      { progressDeadlineSeconds: 24 * 3600 },
    );
    const { d, first } = started(run);
    expect(first).toEqual(["x-1"]);
    expect(member(run, "m-window").state).toBe("NotStarted");
    expect(d.ok({ type: "MemberSucceeded", member: "x-1" }, T0 + HOUR)).toEqual(
      ["x-2"],
    );
    expect(member(run, "m-window")).toMatchObject({
      state: "Pending",
      message:
        "Maintenance window for workloads closed until 2026-03-02T15:00:00Z",
    });
    // The window opens while x-2 still runs; the member starts as soon as the slot frees.
    expect(
      d.ok({ type: "MemberSucceeded", member: "x-2" }, T0 + 6 * HOUR),
    ).toEqual(["m-window"]);
  });

  it("a window that closes before a member is reached moves it behind members without windows", () => {
    const run = resolve(oneStage([{ name: "g" }]), [
      // Open 09:00–11:00 on T0's day only.
      cluster("a-win", {
        updateGroup: "g",
        maintenance: oneOff(T0 - HOUR, T0 + HOUR),
      }),
      cluster("b-busy", { updateGroup: "g" }),
      cluster("c-none", { updateGroup: "g" }),
    ]);
    const { d, first } = started(run, T0 + 2 * HOUR);
    expect(first).toEqual(["b-busy"]);
    expect(d.succeed("b-busy")).toEqual(["c-none"]);
    d.succeed("c-none");
    // A one-off window in the past never opens again.
    expect(member(run, "a-win")).toMatchObject({
      state: "Pending",
      message: "Maintenance window for workloads closed; no opening in sight",
    });
    expect(run.state).toBe("Pending");
    expect(run.wakeAtMs).toBeUndefined();
  });

  it("a group blocked only by windows is Pending while another group of the stage runs, so the stage is Running", () => {
    const run = resolve(oneStage([{ name: "waits" }, { name: "works" }]), [
      cluster("w-1", { updateGroup: "waits", maintenance: fridayNight }),
      cluster("k-1", { updateGroup: "works" }),
    ]);
    started(run);
    expect(running(run)).toEqual(["k-1"]);
    expect([
      group(run, "waits").state,
      group(run, "works").state,
      stage(run, "stage-1").state,
      run.state,
    ]).toEqual(["Pending", "Running", "Running", "Running"]);
    expect(group(run, "waits").message).toBe(
      "w-1: Maintenance window for workloads closed until 2026-03-06T02:00:00Z",
    );
  });

  it("upgrades honour the kubernetes window, not the workloads window (docs/semantics.md#upgrades)", () => {
    const both = windows({
      kubernetes: {
        schedule: { weekly: { dayOfWeek: "Friday" } },
        startTime: "02:00",
        durationHours: 4,
      },
      workloads: {
        schedule: { weekly: { dayOfWeek: "Monday" } },
        startTime: "08:00",
        durationHours: 4,
      },
    });
    const upgrade = resolve(
      oneStage([{ name: "g" }]),
      [
        cluster("c-1", {
          updateGroup: "g",
          maintenance: both,
          kubernetesVersion: "1.30.5",
        }),
      ],
      { payload: fullUpgrade() },
    );
    expect(started(upgrade).first).toEqual([]);
    expect(member(upgrade, "c-1").message).toBe(
      "Maintenance window for kubernetes closed until 2026-03-06T02:00:00Z",
    );

    const bundle = resolve(oneStage([{ name: "g" }]), [
      cluster("c-1", { updateGroup: "g", maintenance: both }),
    ]);
    expect(started(bundle).first).toEqual(["c-1"]);
  });

  it("a freeze holds a member like a closed window until it ends", () => {
    const frozen = windows({
      freezes: [
        {
          start: "2026-03-02T00:00:00Z",
          end: "2026-03-03T00:00:00Z",
          scopes: ["workloads"],
          reason: "release",
        },
      ],
    });
    const run = resolve(oneStage([{ name: "g" }]), [
      cluster("c-1", { updateGroup: "g", maintenance: frozen }),
    ]);
    const { d, first } = started(run);
    expect(first).toEqual([]);
    expect(member(run, "c-1").message).toBe(
      "Maintenance window for workloads closed until 2026-03-03T00:00:00Z",
    );
    expect(d.tick()).toEqual(["c-1"]);
  });

  it("windows reported mid-run (MemberWindowsChanged) are honoured from then on", () => {
    const run = resolve(oneStage([{ name: "g" }]), [
      cluster("a-1", { updateGroup: "g" }),
      cluster("b-1", { updateGroup: "g" }),
    ]);
    const { d } = started(run);
    d.ok({
      type: "MemberWindowsChanged",
      member: "b-1",
      maintenance: fridayNight,
    });
    expect(d.succeed("a-1")).toEqual([]);
    expect(member(run, "b-1").state).toBe("Pending");
    // The owner removes the window: the member starts at once.
    expect(d.ok({ type: "MemberWindowsChanged", member: "b-1" })).toEqual([
      "b-1",
    ]);
  });

  it("a member passed over while unreachable that then reports a closed window waits for the window when it is back", () => {
    const run = resolve(oneStage([{ name: "g" }]), [
      cluster("a-1", { updateGroup: "g" }),
      cluster("b-1", { updateGroup: "g" }),
    ]);
    const { d } = started(run);
    d.ok({ type: "MemberUnreachable", member: "b-1" });
    expect(d.succeed("a-1")).toEqual([]);
    expect(member(run, "b-1")).toMatchObject({
      state: "Pending",
      reason: "Unreachable",
    });
    d.ok({
      type: "MemberWindowsChanged",
      member: "b-1",
      maintenance: fridayNight,
    });
    expect(d.ok({ type: "MemberReachable", member: "b-1" })).toEqual([]);
    expect(member(run, "b-1")).toMatchObject({
      state: "Pending",
      reason: "MaintenanceWindow",
    });
    expect(d.tick()).toEqual(["b-1"]);
    expect(d.now).toBe(at("2026-03-06T02:00:00Z"));
  });

  it("a member whose agent defers the start (window closed on its side) is Pending until the time it gave, then starts", () => {
    const run = resolve(oneStage([{ name: "g" }]), [
      cluster("a-1", { updateGroup: "g" }),
    ]);
    const { d } = started(run);
    d.ok({
      type: "MemberDeferred",
      member: "a-1",
      message: "Window closed until 12:00",
      untilMs: T0 + 2 * HOUR,
    });
    expect(member(run, "a-1")).toMatchObject({
      state: "Pending",
      reason: "Deferred",
      message: "Window closed until 12:00",
    });
    expect(run.state).toBe("Pending");
    expect(run.wakeAtMs).toBe(T0 + 2 * HOUR);
    expect(d.tick()).toEqual(["a-1"]);
  });
});
