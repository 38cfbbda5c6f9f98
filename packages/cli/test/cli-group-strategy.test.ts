/**
 * `flotilla group …` and `flotilla strategy …` against a fake hub: the requests (selector, labels,
 * compare-and-set revision, the strategy file's document as JSON), the printed answers, and
 * problems named against the file they are in.
 */
import { FlotillaError } from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { memoryIo, NOW_MS } from "./fixtures.js";

const HOUR = 3_600_000;

function group(overrides: Partial<wire.ClusterGroup> = {}): wire.ClusterGroup {
  return {
    name: "prod-eu",
    labels: { tier: "gold" },
    selector: "env=prod,region in (eu)",
    createdAtMs: NOW_MS - 48 * HOUR,
    updatedAtMs: NOW_MS - 2 * HOUR,
    revision: 3,
    ...overrides,
  };
}

describe("flotilla group", () => {
  it("creates a group with its selector, labels and reason", async () => {
    await using hub = await startFakeHub({
      unary: {
        CreateClusterGroup: (req) => ({ group: { ...req.group, revision: 1 } }),
      },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "group",
      "create",
      "prod-eu",
      "--selector",
      "env=prod,region in (eu)",
      "--label",
      "tier=gold",
      "--label",
      "team=payments",
      "--reason",
      "new region",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(hub.requests("CreateClusterGroup")).toEqual([
      {
        group: expect.objectContaining({
          name: "prod-eu",
          selector: "env=prod,region in (eu)",
          labels: { tier: "gold", team: "payments" },
        }) as unknown,
        reason: "new region",
      },
    ]);
    expect(out).toBe(
      "Cluster group prod-eu created (revision 1).\n  Selector:  env=prod,region in (eu)\n  Labels:    team=payments,tier=gold\n",
    );
  });

  it("updates by reading the group and writing it back at the revision it read", async () => {
    await using hub = await startFakeHub({
      unary: {
        GetClusterGroup: () => ({ group: group(), clusters: [] }),
        UpdateClusterGroup: (req) => ({ group: { ...req.group, revision: 4 } }),
      },
    });
    const { code } = await cliAgainst(hub, [
      "group",
      "update",
      "prod-eu",
      "--label",
      "tier-",
      "--label",
      "owner=sre",
    ]);
    expect(code).toBe(0);
    expect(hub.requests("UpdateClusterGroup")).toEqual([
      {
        group: expect.objectContaining({
          name: "prod-eu",
          labels: { owner: "sre" },
          selector: "env=prod,region in (eu)",
        }) as unknown,
        expectedRevision: 3,
        reason: "",
      },
    ]);
  });

  it("shows a group with the clusters it selects now, and lists groups", async () => {
    await using hub = await startFakeHub({
      unary: {
        GetClusterGroup: () => ({
          group: group(),
          clusters: ["prod-eu-1", "prod-eu-2"],
        }),
        ListClusterGroups: () => ({
          groups: [group(), group({ name: "all", selector: "", labels: {} })],
          nextPageToken: "",
        }),
      },
    });
    const get = await cliAgainst(hub, ["group", "get", "prod-eu"]);
    expect(get.out).toContain("  Selector:  env=prod,region in (eu)\n");
    expect(get.out).toContain("  Clusters (2): prod-eu-1, prod-eu-2\n");
    const list = await cliAgainst(hub, ["group", "list"]);
    const lines = list.out.split("\n");
    expect(lines[0]).toMatch(/^NAME +SELECTOR +UPDATED +LABELS$/);
    expect(lines[1]).toMatch(
      /^prod-eu +env=prod,region in \(eu\) +2h ago +tier=gold$/,
    );
    expect(lines[2]).toMatch(/^all +<every cluster> +2h ago +<none>$/);
  });

  it("refuses a bad selector and a label removal on create, before calling the hub", async () => {
    await using hub = await startFakeHub({});
    const { code, err } = await cliAgainst(hub, [
      "group",
      "create",
      "g",
      "--selector",
      "env in (a",
      "--label",
      "tier-",
    ]);
    expect(code).toBe(2);
    expect(err).toContain('flotilla: group create: selector "env in (a": ');
    expect(err).toContain(
      'flotilla: group create: "tier-": expected key=value',
    );
    expect(hub.calls).toEqual([]);
  });
});

const STRATEGY_YAML = `stages:
  - name: canary
    groups:
      - name: canary
        maxConcurrency: 1
  - name: prod
    maxConcurrency: 25%
`;

describe("flotilla strategy", () => {
  it("sends a YAML file's document as strategy_json and prints the hub's warnings", async () => {
    await using hub = await startFakeHub({
      unary: {
        CreateUpdateStrategy: (req) => ({
          strategy: {
            name: req.name,
            strategyJson: req.strategyJson,
            revision: 1,
            createdAtMs: NOW_MS,
            updatedAtMs: NOW_MS,
          },
          warnings: [
            {
              code: "FailFast",
              message:
                "no stage sets maxAllowedFailures: the first failure fails the run",
            },
          ],
        }),
      },
    });
    const io = memoryIo({ "strategy.yaml": STRATEGY_YAML });
    const { code, out, err } = await cliAgainst(
      hub,
      [
        "strategy",
        "create",
        "canary-first",
        "-f",
        "strategy.yaml",
        "--reason",
        "initial",
      ],
      io,
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    const [request] = hub.requests<{
      name: string;
      strategyJson: string;
      reason: string;
    }>("CreateUpdateStrategy");
    expect(request?.name).toBe("canary-first");
    expect(request?.reason).toBe("initial");
    expect(JSON.parse(request?.strategyJson ?? "")).toEqual({
      stages: [
        { name: "canary", groups: [{ name: "canary", maxConcurrency: 1 }] },
        { name: "prod", maxConcurrency: "25%" },
      ],
    });
    expect(out).toContain(
      "Strategy canary-first created (revision 1, 2 stages).",
    );
    expect(out).toContain(
      "! no stage sets maxAllowedFailures: the first failure fails the run (FailFast)",
    );
  });

  it("reports a YAML syntax error as FILE:LINE:COL without calling the hub, exit 2", async () => {
    await using hub = await startFakeHub({});
    const io = memoryIo({
      "bad.yaml": "stages:\n  - name: canary\n    groups: [{name: canary\n",
    });
    const { code, err } = await cliAgainst(
      hub,
      ["strategy", "create", "s", "-f", "bad.yaml"],
      io,
    );
    expect(code).toBe(2);
    expect(err).toMatch(/^bad\.yaml:\d+:\d+: /);
    expect(hub.calls).toEqual([]);
  });

  it("prints the hub's problems against the file, exit 2", async () => {
    await using hub = await startFakeHub({
      unary: {
        UpdateUpdateStrategy: () => {
          throw FlotillaError.invalid("update strategy", [
            {
              path: "strategyJson.stages[1].maxConcurrency",
              message: "must be at most 100%",
              value: "250%",
            },
            {
              path: "stages[0].groups[0].nmae",
              message: 'unknown field; did you mean "name"?',
            },
          ]);
        },
      },
    });
    const io = memoryIo({ "s.yaml": STRATEGY_YAML });
    const { code, err } = await cliAgainst(
      hub,
      ["strategy", "update", "s", "-f", "s.yaml", "--expected-revision", "2"],
      io,
    );
    expect(code).toBe(2);
    expect(err).toContain(
      '  s.yaml: stages[1].maxConcurrency: must be at most 100% (got "250%")\n',
    );
    expect(err).toContain(
      '  s.yaml: stages[0].groups[0].nmae: unknown field; did you mean "name"?\n',
    );
    expect(hub.requests("UpdateUpdateStrategy")[0]).toMatchObject({
      expectedRevision: 2,
    });
  });

  it("shows a stored strategy as YAML and lists strategies", async () => {
    const stored: wire.UpdateStrategy = {
      name: "canary-first",
      strategyJson: JSON.stringify({
        stages: [{ name: "canary" }, { name: "prod" }],
      }),
      revision: 2,
      createdAtMs: NOW_MS - 5 * HOUR,
      updatedAtMs: NOW_MS - HOUR,
    };
    await using hub = await startFakeHub({
      unary: {
        GetUpdateStrategy: () => ({ strategy: stored }),
        ListUpdateStrategies: () => ({
          strategies: [stored],
          nextPageToken: "",
        }),
        DeleteUpdateStrategy: () => ({}),
      },
    });
    const get = await cliAgainst(hub, ["strategy", "get", "canary-first"]);
    expect(get.out).toBe(
      "# Strategy canary-first · revision 2 · updated 2026-03-02T09:00:00Z\nstages:\n  - name: canary\n  - name: prod\n",
    );
    const list = await cliAgainst(hub, ["strategy", "list"]);
    expect(list.out.split("\n")[1]).toMatch(/^canary-first +2 +2 +1h ago$/);
    const json = await cliAgainst(hub, ["strategy", "list", "-o", "json"]);
    expect(
      (JSON.parse(json.out) as { strategies: { name: string }[] }).strategies[0]
        ?.name,
    ).toBe("canary-first");
    const del = await cliAgainst(hub, [
      "strategy",
      "delete",
      "canary-first",
      "--reason",
      "unused",
    ]);
    expect(del.out).toBe("Strategy canary-first deleted.\n");
    expect(hub.requests("DeleteUpdateStrategy")).toEqual([
      { name: "canary-first", reason: "unused" },
    ]);
  });
});
