import { describe, expect, it } from "vitest";
import type { Problem, Result } from "@flotilla/core";
import {
  clusterFactsFromWire,
  clusterFactsToWire,
  loadProtocol,
  maintenanceFromWire,
  maintenanceToWire,
  type ClusterFacts,
  type wire,
} from "@flotilla/protocol";
import { MAX_LABELS, MAX_WINDOWS_PER_SCOPE } from "@flotilla/protocol/testing";
import { clusters, maintenance, valueOf } from "./fixtures.js";
import { compact } from "@flotilla/core";

/** Sends a message on the agent stream with real protobuf and returns what the hub decodes. */
function sent(message: wire.AgentMessage): wire.AgentMessage__Output {
  const connect = loadProtocol().agentService.Connect;
  return connect.requestDeserialize(connect.requestSerialize(message));
}

function problemsOf<T>(result: Result<T>): readonly Problem[] {
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.problems;
}

function windowsChanged(raw: unknown): unknown {
  return sent({ windowsChanged: { maintenance: raw as wire.Maintenance } })
    .windowsChanged?.maintenance;
}

describe("maintenance codec", () => {
  it("carries every kind of window and freeze through protobuf unchanged", () => {
    const m = maintenance();
    const decoded = windowsChanged(maintenanceToWire(m));
    expect(valueOf(maintenanceFromWire(decoded))).toEqual(m);
  });

  it("reads an absent configuration as no windows and no freezes", () => {
    expect(valueOf(maintenanceFromWire(null))).toEqual({
      windows: { kubernetes: [], nodeImage: [], workloads: [] },
      freezes: [],
    });
  });

  it("applies core's rules with wire paths: end before start, bad time, missing anchor", () => {
    const raw = windowsChanged({
      kubernetes: [{ oneOff: { startMs: 2_000_000, endMs: 1_000_000 } }],
      nodeImage: [
        {
          recurring: {
            schedule: {
              weekly: { intervalWeeks: 2, dayOfWeek: "DAY_OF_WEEK_MONDAY" },
            },
            startTime: "25:00",
            utcOffset: "+00:00",
            durationHours: 4,
          },
        },
      ],
      freezes: [{ startMs: 5_000, endMs: 5_000, scopes: [] }],
    });
    const problems = problemsOf(maintenanceFromWire(raw, "windows"));
    expect(problems.map((p) => p.path).sort()).toEqual([
      "windows.freezes[0].endMs",
      "windows.kubernetes[0].oneOff.endMs",
      "windows.nodeImage[0].recurring.startDate",
      "windows.nodeImage[0].recurring.startTime",
    ]);
  });

  it("refuses shapes core never sees: no kind, unknown enums, out-of-range numbers, too many windows", () => {
    const window = { oneOff: { startMs: 0, endMs: 1 } };
    const raw = windowsChanged({
      kubernetes: Array.from(
        { length: MAX_WINDOWS_PER_SCOPE + 1 },
        () => window,
      ),
      nodeImage: [{}],
      workloads: [
        {
          recurring: {
            schedule: {
              relativeMonthly: {
                intervalMonths: 1,
                weekIndex: 9,
                dayOfWeek: "DAY_OF_WEEK_UNSPECIFIED",
              },
            },
            startTime: "01:00",
            utcOffset: "+00:00",
            durationHours: 25,
          },
        },
      ],
      freezes: [{ startMs: 0, endMs: 1, scopes: ["WINDOW_SCOPE_UNSPECIFIED"] }],
    });
    const problems = problemsOf(maintenanceFromWire(raw));
    expect(problems.map((p) => [p.path, p.message])).toEqual(
      expect.arrayContaining([
        ["maintenance.kubernetes", "must have at most 16 items"],
        [
          "maintenance.nodeImage[0]",
          "must set exactly one of recurring, oneOff",
        ],
        [
          "maintenance.workloads[0].recurring.schedule.relativeMonthly.weekIndex",
          expect.stringContaining("must be one of WEEK_INDEX_FIRST"),
        ],
        [
          "maintenance.workloads[0].recurring.schedule.relativeMonthly.dayOfWeek",
          expect.stringContaining("must be one of DAY_OF_WEEK_MONDAY"),
        ],
        [
          "maintenance.workloads[0].recurring.durationHours",
          "must be at most 24",
        ],
        [
          "maintenance.freezes[0].scopes[0]",
          expect.stringContaining("must be one of WINDOW_SCOPE_KUBERNETES"),
        ],
      ]),
    );
  });
});

describe("cluster facts codec", () => {
  const facts = (): ClusterFacts => {
    const c = clusters().find((x) => x.name === "prod-us-2");
    if (c === undefined) throw new Error("fixture changed");
    return {
      labels: c.labels,
      nodePools: c.nodePools,
      ...compact({
        kubernetesVersion: c.kubernetesVersion,
        region: c.region,
        maintenance: c.maintenance,
      }),
    };
  };

  it("carries facts with maintenance through protobuf unchanged", () => {
    const f = facts();
    expect(f.maintenance).toBeDefined();
    const decoded = sent({ facts: clusterFactsToWire(f) }).facts;
    expect(valueOf(clusterFactsFromWire(decoded))).toEqual(f);
  });

  it("keeps absent optional facts absent", () => {
    const bare: ClusterFacts = { labels: {}, nodePools: [] };
    const decoded = sent({ facts: clusterFactsToWire(bare) }).facts;
    expect(valueOf(clusterFactsFromWire(decoded))).toEqual(bare);
  });

  it("carries the support plan and refuses one AKS does not have, naming the field and the value", () => {
    const lts: ClusterFacts = {
      labels: {},
      nodePools: [],
      supportPlan: "AKSLongTermSupport",
    };
    const decoded = sent({ facts: clusterFactsToWire(lts) }).facts;
    expect(valueOf(clusterFactsFromWire(decoded))).toEqual(lts);
    const bad = sent({ facts: { supportPlan: "Premium" } }).facts;
    expect(problemsOf(clusterFactsFromWire(bad))).toEqual([
      {
        path: "facts.supportPlan",
        message: 'must be one of "KubernetesOfficial", "AKSLongTermSupport"',
        value: "Premium",
      },
    ]);
  });

  it("refuses a __proto__ label, which protobuf carries and a plain record would drop", () => {
    const labels = JSON.parse('{"__proto__":"x","env":"prod"}') as Record<
      string,
      string
    >;
    const decoded = sent({ facts: { labels } }).facts;
    expect(problemsOf(clusterFactsFromWire(decoded))).toMatchObject([
      { path: "facts.labels.__proto__" },
    ]);
  });

  it("normalises versions and refuses bad labels, versions, duplicate pools and too many labels", () => {
    const labels = Object.fromEntries(
      Array.from({ length: MAX_LABELS + 1 }, (_, i) => [`k${String(i)}`, "v"]),
    );
    const tooMany = sent({ facts: { labels } }).facts;
    expect(problemsOf(clusterFactsFromWire(tooMany))).toEqual([
      {
        path: "facts.labels",
        message: "must have at most 64 labels",
        value: labels,
      },
    ]);

    const pool = { name: "p", imageFamily: "f", imageVersion: "1" };
    const bad = sent({
      facts: {
        labels: { "bad key!": "v" },
        kubernetesVersion: "1.x",
        nodePools: [pool, pool],
      },
    }).facts;
    const paths = problemsOf(clusterFactsFromWire(bad)).map((p) => p.path);
    expect(paths).toEqual(["facts.kubernetesVersion"]);

    const bad2 = sent({
      facts: { labels: { "bad key!": "v" }, nodePools: [pool, pool] },
    }).facts;
    expect(problemsOf(clusterFactsFromWire(bad2)).map((p) => p.path)).toEqual([
      "facts.labels.bad key!",
      "facts.nodePools[1].name",
    ]);

    const v = sent({ facts: { kubernetesVersion: "v1.31.2" } }).facts;
    expect(valueOf(clusterFactsFromWire(v)).kubernetesVersion).toBe("1.31.2");
  });
});
