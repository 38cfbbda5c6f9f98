/**
 * Every AdminService method against bad input, over real gRPC: malformed requests are
 * INVALID_ARGUMENT naming the field, unknown names NOT_FOUND, impossible actions
 * FAILED_PRECONDITION, and afterwards the store holds exactly what it held before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callUnary, type wire } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { status as grpcStatus } from "@grpc/grpc-js";
import { COLLECTION_NAMES } from "../src/store/keys.js";
import { defineCollection } from "../src/store/state-store.js";
import { startTestHub, type TestHub } from "./hub-harness.js";
import { connectScriptedAgent, type ScriptedAgent } from "./scripted-agent.js";

let hub: TestHub;
let agent: ScriptedAgent;

const STRATEGY = JSON.stringify({
  stages: [
    {
      name: "all",
      memberSelector: { byLabel: "env=prod" },
      afterGates: [{ type: "Approval", displayName: "check" }],
    },
  ],
});
const UPGRADE = {
  upgrade: { type: "UPGRADE_TYPE_FULL", kubernetesVersion: "1.30.1" },
} as const;

beforeAll(async () => {
  hub = await startTestHub();
  agent = connectScriptedAgent(hub.address);
  agent.hello("c-1");
  agent.send({
    facts: {
      labels: { env: "prod" },
      kubernetesVersion: "1.29.2",
      nodePools: [],
    },
  });
  await agent.next("welcome");
  await waitFor(
    () => hub.hub.registry.cluster("c-1")?.labels["env"] === "prod",
  );
  const admin = hub.admin;
  await callUnary(admin, "createClusterGroup", {
    group: { name: "prod", selector: "env=prod" },
    reason: "",
  });
  await callUnary(admin, "createUpdateStrategy", {
    name: "s",
    strategyJson: STRATEGY,
    reason: "",
  });
  await callUnary(admin, "createUpdateRun", {
    name: "r",
    strategyName: "s",
    payload: UPGRADE,
    reason: "",
  });
});

afterAll(async () => {
  agent.close();
  await hub.stop();
});

async function snapshot(): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const name of COLLECTION_NAMES) {
    out[name] = await hub.store.list(defineCollection(name, (v) => v));
  }
  return out;
}

type Case = readonly [
  label: string,
  call: () => Promise<unknown>,
  expected: { code: string; path?: string; message?: RegExp },
];

const cases = (): Case[] => {
  const a = hub.admin;
  const name = (n: string) => ({ name: n, reason: "" });
  return [
    [
      "ListClusters bad selector",
      () => callUnary(a, "listClusters", { labelSelector: "env in (" }),
      { code: "invalid_argument", path: "labelSelector" },
    ],
    [
      "ListClusters bad page size",
      () => callUnary(a, "listClusters", { pageSize: 5000 }),
      { code: "invalid_argument", path: "pageSize" },
    ],
    [
      "ListClusters bad page token",
      () => callUnary(a, "listClusters", { pageToken: "@@" }),
      { code: "invalid_argument", path: "pageToken" },
    ],
    [
      "GetCluster empty",
      () => callUnary(a, "getCluster", { name: "" }),
      { code: "invalid_argument", path: "name" },
    ],
    [
      "GetCluster unknown",
      () => callUnary(a, "getCluster", { name: "ghost" }),
      { code: "not_found" },
    ],
    [
      "LabelCluster bad key",
      () =>
        callUnary(a, "labelCluster", {
          name: "c-1",
          setLabels: { "bad key!": "x" },
          reason: "",
        }),
      { code: "invalid_argument", path: "setLabels.bad key!" },
    ],
    [
      "LabelCluster unknown",
      () =>
        callUnary(a, "labelCluster", {
          name: "ghost",
          setLabels: { a: "b" },
          reason: "",
        }),
      { code: "not_found" },
    ],
    [
      "LabelCluster stale revision",
      () =>
        callUnary(a, "labelCluster", {
          name: "c-1",
          setLabels: { a: "b" },
          expectedRevision: 1,
          reason: "",
        }),
      { code: "failed_precondition" },
    ],
    [
      "RemoveCluster bad name",
      () => callUnary(a, "removeCluster", name("Not_A_Name")),
      { code: "invalid_argument", path: "name" },
    ],
    [
      "RemoveCluster unknown",
      () => callUnary(a, "removeCluster", name("ghost")),
      { code: "not_found" },
    ],
    [
      "CreateClusterGroup no group",
      () => callUnary(a, "createClusterGroup", { reason: "" }),
      { code: "invalid_argument", path: "group" },
    ],
    [
      "CreateClusterGroup bad selector",
      () =>
        callUnary(a, "createClusterGroup", {
          group: { name: "g", selector: "env in (" },
          reason: "",
        }),
      { code: "invalid_argument", path: "group.selector" },
    ],
    [
      "CreateClusterGroup exists",
      () =>
        callUnary(a, "createClusterGroup", {
          group: { name: "prod" },
          reason: "",
        }),
      { code: "already_exists" },
    ],
    [
      "UpdateClusterGroup unknown",
      () =>
        callUnary(a, "updateClusterGroup", {
          group: { name: "ghost" },
          reason: "",
        }),
      { code: "not_found" },
    ],
    [
      "GetClusterGroup bad",
      () => callUnary(a, "getClusterGroup", { name: "" }),
      { code: "invalid_argument", path: "name" },
    ],
    [
      "GetClusterGroup unknown",
      () => callUnary(a, "getClusterGroup", { name: "ghost" }),
      { code: "not_found" },
    ],
    [
      "ListClusterGroups bad token",
      () => callUnary(a, "listClusterGroups", { pageToken: "!" }),
      { code: "invalid_argument", path: "pageToken" },
    ],
    [
      "DeleteClusterGroup unknown",
      () => callUnary(a, "deleteClusterGroup", name("ghost")),
      { code: "not_found" },
    ],
    [
      "ApplyBundle no bundle",
      () => callUnary(a, "applyBundle", { reason: "" }),
      { code: "invalid_argument" },
    ],
    [
      "ApplyBundle bad targets",
      () =>
        callUnary(a, "applyBundle", {
          bundle: {
            name: "web",
            namespace: "web",
            manifests: [],
            targetsJson: '[{"clusterSelector": 5}]',
          },
          reason: "",
        }),
      { code: "invalid_argument", message: /targets/ },
    ],
    [
      "ListBundles bad size",
      () => callUnary(a, "listBundles", { pageSize: 100000 }),
      { code: "invalid_argument", path: "pageSize" },
    ],
    [
      "GetBundle unknown",
      () => callUnary(a, "getBundle", { name: "ghost" }),
      { code: "not_found" },
    ],
    [
      "DeleteBundle bad",
      () => callUnary(a, "deleteBundle", name("")),
      { code: "invalid_argument", path: "name" },
    ],
    [
      "CreateUpdateStrategy bad JSON",
      () =>
        callUnary(a, "createUpdateStrategy", {
          name: "t",
          strategyJson: "{",
          reason: "",
        }),
      { code: "invalid_argument", path: "strategyJson" },
    ],
    [
      "CreateUpdateStrategy bad field",
      () =>
        callUnary(a, "createUpdateStrategy", {
          name: "t",
          strategyJson: '{"stages":[{"name":"a","maxConcurency":1}]}',
          reason: "",
        }),
      { code: "invalid_argument", message: /maxConcurency/ },
    ],
    [
      "UpdateUpdateStrategy unknown",
      () =>
        callUnary(a, "updateUpdateStrategy", {
          name: "ghost",
          strategyJson: STRATEGY,
          reason: "",
        }),
      { code: "not_found" },
    ],
    [
      "GetUpdateStrategy bad",
      () => callUnary(a, "getUpdateStrategy", { name: "UPPER" }),
      { code: "invalid_argument", path: "name" },
    ],
    [
      "ListUpdateStrategies bad size",
      () => callUnary(a, "listUpdateStrategies", { pageSize: 1001 }),
      { code: "invalid_argument", path: "pageSize" },
    ],
    [
      "DeleteUpdateStrategy unknown",
      () => callUnary(a, "deleteUpdateStrategy", name("ghost")),
      { code: "not_found" },
    ],
    [
      "CreateUpdateRun no payload",
      () => callUnary(a, "createUpdateRun", { name: "x", reason: "" }),
      { code: "invalid_argument", path: "payload" },
    ],
    [
      "CreateUpdateRun bad version",
      () =>
        callUnary(a, "createUpdateRun", {
          name: "x",
          payload: {
            upgrade: { type: "UPGRADE_TYPE_FULL", kubernetesVersion: "one" },
          },
          reason: "",
        }),
      { code: "invalid_argument", message: /kubernetesVersion/ },
    ],
    [
      "CreateUpdateRun long-term support with NodeImageOnly",
      () =>
        callUnary(a, "createUpdateRun", {
          name: "x",
          payload: {
            upgrade: {
              type: "UPGRADE_TYPE_NODE_IMAGE_ONLY",
              requiresLongTermSupport: true,
            },
          },
          reason: "",
        }),
      {
        code: "invalid_argument",
        path: "payload.upgrade.requiresLongTermSupport",
      },
    ],
    [
      "CreateUpdateRun unknown strategy",
      () =>
        callUnary(a, "createUpdateRun", {
          name: "x",
          strategyName: "ghost",
          payload: UPGRADE,
          reason: "",
        }),
      { code: "not_found" },
    ],
    [
      "CreateUpdateRun exists",
      () =>
        callUnary(a, "createUpdateRun", {
          name: "r",
          payload: UPGRADE,
          reason: "",
        }),
      { code: "already_exists" },
    ],
    [
      "CreateUpdateRun bad deadline",
      () =>
        callUnary(a, "createUpdateRun", {
          name: "x",
          payload: UPGRADE,
          progressDeadlineSeconds: 0,
          reason: "",
        }),
      { code: "invalid_argument", path: "progressDeadlineSeconds" },
    ],
    [
      "StartUpdateRun unknown",
      () => callUnary(a, "startUpdateRun", name("ghost")),
      { code: "not_found" },
    ],
    [
      "StopUpdateRun not started",
      () => callUnary(a, "stopUpdateRun", name("r")),
      { code: "failed_precondition" },
    ],
    [
      "SkipUpdateRunTargets nothing",
      () => callUnary(a, "skipUpdateRunTargets", name("r")),
      { code: "invalid_argument", path: "stages" },
    ],
    [
      "SkipUpdateRunTargets unknown stage",
      () =>
        callUnary(a, "skipUpdateRunTargets", {
          name: "r",
          stages: ["ghost"],
          reason: "",
        }),
      { code: "not_found" },
    ],
    [
      "RetryUpdateRunMembers empty name",
      () =>
        callUnary(a, "retryUpdateRunMembers", {
          name: "r",
          members: [""],
          reason: "",
        }),
      { code: "invalid_argument", path: "members[0]" },
    ],
    [
      "ApproveGate not pending",
      () =>
        callUnary(a, "approveGate", {
          run: "r",
          gateId: "stage:all:after",
          reason: "",
        }),
      { code: "failed_precondition" },
    ],
    [
      "ApproveGate unknown gate",
      () =>
        callUnary(a, "approveGate", {
          run: "r",
          gateId: "stage:ghost:after",
          reason: "",
        }),
      { code: "not_found" },
    ],
    [
      "CompleteGate bad run",
      () => callUnary(a, "completeGate", { run: "", gateId: "x", reason: "" }),
      { code: "invalid_argument", path: "run" },
    ],
    [
      "GetUpdateRun unknown",
      () => callUnary(a, "getUpdateRun", { name: "ghost" }),
      { code: "not_found" },
    ],
    [
      "ListUpdateRuns bad state",
      () =>
        callUnary(a, "listUpdateRuns", {
          states: ["RUN_STATE_BOGUS" as wire.RunState],
        }),
      { code: "invalid_argument", path: "states[0]" },
    ],
    [
      "PreviewPlan nothing",
      () => callUnary(a, "previewPlan", {}),
      { code: "invalid_argument", path: "strategy" },
    ],
    [
      "PreviewPlan bad JSON",
      () => callUnary(a, "previewPlan", { strategyJson: "[" }),
      { code: "invalid_argument", path: "strategyJson" },
    ],
    [
      "PreviewPlan unknown bundle",
      () => callUnary(a, "previewPlan", { bundle: "ghost" }),
      { code: "not_found" },
    ],
    [
      "ListAuditEvents bad token",
      () => callUnary(a, "listAuditEvents", { pageToken: "zz" }),
      { code: "invalid_argument", path: "pageToken" },
    ],
    [
      "CreateBootstrapToken without a lifetime",
      () =>
        callUnary(a, "createBootstrapToken", {
          ttlSeconds: 0,
          maxUses: 1,
          reason: "",
        }),
      { code: "invalid_argument", path: "ttlSeconds" },
    ],
  ];
};

describe("AdminService refuses bad input and changes nothing", () => {
  it("answers every malformed, unknown or impossible request with the right code and field", async () => {
    const before = await snapshot();
    const failures: string[] = [];
    for (const [label, call, expected] of cases()) {
      try {
        await call();
        failures.push(`${label}: succeeded`);
      } catch (error) {
        const e = error as {
          code: string;
          message: string;
          problems: { path: string }[];
        };
        if (e.code !== expected.code)
          failures.push(`${label}: ${e.code} (${e.message})`);
        if (
          expected.path !== undefined &&
          !e.problems.some((p) => p.path === expected.path)
        ) {
          failures.push(
            `${label}: problems ${JSON.stringify(e.problems)} lack ${expected.path}`,
          );
        }
        if (
          expected.message !== undefined &&
          !expected.message.test(e.message)
        ) {
          failures.push(`${label}: message ${e.message}`);
        }
      }
    }
    expect(failures).toEqual([]);
    await hub.hub.runs.idle();
    expect(await snapshot()).toEqual(before);
  });

  it("ends WatchUpdateRun for an unknown run with NOT_FOUND", async () => {
    const call = hub.admin.watchUpdateRun({ name: "ghost" });
    const code = await new Promise<number>((resolve) => {
      call.on("error", (e: { code: number }) => {
        resolve(e.code);
      });
      call.on("data", () => undefined);
    });
    expect(code).toBe(grpcStatus.NOT_FOUND);
  });
});
