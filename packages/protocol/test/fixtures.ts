/**
 * Domain values for the protocol tests, built with core's own parsers and engine so the codecs
 * are tested on what the hub and agents really produce.
 */
import {
  formatProblem,
  parseMaintenance,
  parseUpdateStrategy,
  resolveRun,
  step,
  type Cluster,
  type Maintenance,
  type Result,
  type Run,
  type RunEvent,
} from "@flotilla/core";
import { parseClusters } from "@flotilla/core/testing";

/** Monday 2026-03-02 10:00 UTC. */
export const T0 = Date.UTC(2026, 2, 2, 10);
export const MINUTE = 60_000;

/** The value of a successful result; a failure fails the test with every problem. */
export function valueOf<T>(result: Result<T>): T {
  if (!result.ok)
    throw new Error(result.problems.map(formatProblem).join("\n"));
  return result.value;
}

/** A maintenance block using every kind of window and a freeze, as an owner writes it. */
export const MAINTENANCE_FILE = {
  kubernetes: [
    {
      schedule: { weekly: { dayOfWeek: "Saturday", intervalWeeks: 2 } },
      startTime: "22:00",
      utcOffset: "+02:00",
      durationHours: 6,
      startDate: "2026-01-03",
      notAllowedDates: [{ start: "2026-12-24", end: "2026-12-26" }],
    },
    { start: "2026-03-07T00:00:00Z", end: "2026-03-08T00:00:00Z" },
  ],
  nodeImage: {
    schedule: { relativeMonthly: { weekIndex: "Last", dayOfWeek: "Sunday" } },
    startTime: "01:30",
    durationHours: 4,
  },
  workloads: [
    { schedule: { daily: {} }, startTime: "08:00", durationHours: 10 },
    {
      schedule: { absoluteMonthly: { dayOfMonth: 15, intervalMonths: 1 } },
      startTime: "00:00",
      utcOffset: "-05:30",
      durationHours: 24,
    },
  ],
  freezes: [
    {
      start: "2026-12-20",
      end: "2027-01-02",
      scopes: ["workloads", "kubernetes"],
      reason: "holidays",
    },
    { start: "2026-04-01T00:00:00Z", end: "2026-04-01T12:00:00.250Z" },
  ],
};

/** {@link MAINTENANCE_FILE} parsed by core. */
export function maintenance(): Maintenance {
  return valueOf(parseMaintenance(MAINTENANCE_FILE));
}

/** A small fleet with versions, pools and (for one) windows; edge-1 is in no group. */
export function clusters(): Cluster[] {
  const pools = (version: string) => [
    { name: "system", imageFamily: "ubuntu-22.04", imageVersion: version },
    {
      name: "win",
      imageFamily: "windows-2022",
      imageVersion: "2026.01.1",
      kubernetesVersion: "1.30.4",
    },
  ];
  const entries = [
    ["canary-1", "canary", "eu"],
    ["canary-2", "canary", "eu"],
    ["prod-eu-1", "prod-eu", "eu"],
    ["prod-eu-2", "prod-eu", "eu"],
    ["prod-us-1", "prod-us", "us"],
    ["prod-us-2", "prod-us", "us"],
    ["lab-1", "lab", "us"],
    ["edge-1", "edge", "us"],
  ] as const;
  return valueOf(
    parseClusters(
      entries.map(([name, group, region]) => ({
        name,
        labels: { env: name.split("-")[0] ?? "", region },
        updateGroup: group,
        kubernetesVersion: "1.30.4",
        nodePools: pools("2026.01.1"),
        region,
        ...(name === "prod-us-2" ? { maintenance: MAINTENANCE_FILE } : {}),
      })),
    ),
  );
}

/** An AKS strategy with every kind of gate, budgets (and none: lab fails fast), and a wait. */
export const STRATEGY = {
  stages: [
    {
      name: "canary",
      groups: [{ name: "canary", maxConcurrency: 2, maxAllowedFailures: 1 }],
      afterGates: [{ type: "Approval", displayName: "Canary looks good" }],
      afterStageWaitInSeconds: 600,
    },
    {
      name: "prod",
      maxConcurrency: "50%",
      maxAllowedFailures: 1,
      beforeGates: [
        {
          type: "ScheduledStart",
          scheduledStartConfiguration: {
            startDay: "Tuesday",
            startTime: "09:30",
            utcOffset: "+01:00",
          },
        },
      ],
      groups: [
        { name: "prod-eu", maxConcurrency: 1 },
        {
          name: "prod-us",
          maxConcurrency: "100%",
          beforeGates: [{ type: "Approval" }],
        },
      ],
    },
    { name: "lab", memberSelector: { byLabel: "env=lab" } },
  ],
};

/**
 * A run part-way through: started, one canary succeeded and one failed (within the canary
 * budget); later stages untouched with their gates. An upgrade with Consistent node images.
 */
export function runInProgress(): Run {
  let run = valueOf(
    resolveRun({
      name: "upgrade-1-31",
      strategy: valueOf(parseUpdateStrategy(STRATEGY)),
      clusters: clusters(),
      payload: {
        kind: "upgrade",
        upgrade: {
          type: "Full",
          kubernetesVersion: "1.31.2",
          nodeImageSelection: "Consistent",
        },
      },
      createdAtMs: T0,
      available: {
        kubernetes: [{ version: "1.31.2" }],
        nodeImages: [
          { family: "ubuntu-22.04", version: "2026.02.3" },
          { family: "windows-2022", version: "2026.02.1" },
        ],
      },
    }),
  );
  const events: [RunEvent, number][] = [
    [{ type: "StartRun", actor: "alice", reason: "go" }, T0 + MINUTE],
    [{ type: "MemberSucceeded", member: "canary-1" }, T0 + 5 * MINUTE],
    [
      { type: "MemberFailed", member: "canary-2", error: "boom" },
      T0 + 6 * MINUTE,
    ],
  ];
  for (const [event, nowMs] of events) run = step(run, event, nowMs).run;
  return run;
}

/**
 * The status view of a run, computed independently of the codec: core's JSON without the
 * engine's private bookkeeping (what RunStatus deliberately leaves out).
 */
export function expectedView(run: Run, revision: number): unknown {
  const json = JSON.parse(JSON.stringify(run)) as Record<string, unknown>;
  const drop = (o: Record<string, unknown>, keys: string[]): void => {
    for (const k of keys) Reflect.deleteProperty(o, k);
  };
  drop(json, ["apiVersion", "available", "deadlines"]);
  for (const stage of json["stages"] as Record<string, unknown>[]) {
    for (const group of stage["groups"] as Record<string, unknown>[]) {
      drop(group, ["cursor", "deferred", "constrained"]);
      for (const member of group["members"] as Record<string, unknown>[])
        drop(member, ["maintenance", "nodePools", "supportPlan"]);
    }
  }
  return { ...json, revision };
}
