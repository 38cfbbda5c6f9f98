/**
 * The bounds on what the AdminService accepts, over real gRPC against a whole hub: JSON and YAML
 * nested deeper than MAX_NESTING_DEPTH, `__proto__` keys, more labels than a cluster may have, and
 * more stages than a strategy may have are INVALID_ARGUMENT naming the field; nothing is stored,
 * and the hub goes on answering.
 */
import { MAX_LABELS } from "@flotilla/core";
import { MAX_NESTING_DEPTH, MAX_STAGES } from "@flotilla/core/testing";
import { callUnary, type wire } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COLLECTION_NAMES } from "../src/store/keys.js";
import { defineCollection } from "../src/store/state-store.js";
import { startTestHub, type TestHub } from "./hub-harness.js";
import { connectScriptedAgent, type ScriptedAgent } from "./scripted-agent.js";

let hub: TestHub;
let agent: ScriptedAgent;

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

/** `{"a":{"a":…{"a":1}…}}`, `depth` objects deep, as JSON text. */
const deepJson = (depth: number): string =>
  `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const CONFIG_MAP = new TextEncoder().encode(
  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n",
);

const bundle = (
  fields: Partial<wire.BundleSpec>,
  manifest: Uint8Array = CONFIG_MAP,
): wire.ApplyBundleRequest => ({
  bundle: {
    name: "web",
    namespace: "web",
    manifests: [{ path: "cm.yaml", yaml: manifest }],
    targetsJson: '[{"clusterSelector": {}}]',
    ...fields,
  },
  reason: "",
});

const customizationWithPatch = (patchJson: string): string =>
  `[{"clusterName":"c-1","patches":[{"target":{"kind":"ConfigMap","name":"settings"},"patch":${patchJson}}]}]`;

const labels = (n: number): Record<string, string> =>
  Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`k${String(i)}`, "v"]),
  );

const stagesJson = (n: number): string =>
  JSON.stringify({
    stages: Array.from({ length: n }, (_, i) => ({
      name: `s${String(i)}`,
      memberSelector: { byLabel: "env=prod" },
    })),
  });

type Case = readonly [
  label: string,
  call: () => Promise<unknown>,
  path: RegExp,
  message: RegExp,
];

const cases = (): Case[] => {
  const a = hub.admin;
  return [
    [
      "a targetCustomizations patch 10,000 objects deep",
      () =>
        callUnary(
          a,
          "applyBundle",
          bundle({
            targetCustomizationsJson: customizationWithPatch(
              `{"data":${deepJson(10_000)}}`,
            ),
          }),
        ),
      /^bundle\.targetCustomizations\[0\]\.patches\[0\]\.patch\.data\.a\.a\.a/,
      /nested more than 128 levels deep/,
    ],
    [
      "targets 10,000 arrays deep",
      () =>
        callUnary(
          a,
          "applyBundle",
          bundle({
            targetsJson: `${"[".repeat(10_000)}${"]".repeat(10_000)}`,
          }),
        ),
      /^bundle\.targets\[0\]\[0\]/,
      /nested more than 128 levels deep/,
    ],
    [
      "a manifest 10,000 flow sequences deep",
      () =>
        callUnary(
          a,
          "applyBundle",
          bundle(
            {},
            new TextEncoder().encode(
              `${"[".repeat(10_000)}${"]".repeat(10_000)}`,
            ),
          ),
        ),
      /^bundle\.manifests\[0\]/,
      /nested more than 128 levels deep/,
    ],
    [
      "a manifest 200 mappings deep",
      () =>
        callUnary(
          a,
          "applyBundle",
          bundle(
            {},
            new TextEncoder().encode(
              `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: ${deepJson(200)}\n`,
            ),
          ),
        ),
      /^bundle\.manifests\[0\]/,
      /nested more than 128 levels deep/,
    ],
    [
      "a __proto__ key in a target",
      () =>
        callUnary(
          a,
          "applyBundle",
          bundle({
            targetsJson:
              '[{"clusterSelector":{},"__proto__":{"doNotDeploy":true}}]',
          }),
        ),
      /^bundle\.targets\[0\]\.__proto__$/,
      /not allowed/,
    ],
    [
      "a __proto__ key in a merge patch",
      () =>
        callUnary(
          a,
          "applyBundle",
          bundle({
            targetCustomizationsJson: customizationWithPatch(
              '{"data":{"__proto__":{"x":"y"}}}',
            ),
          }),
        ),
      /^bundle\.targetCustomizations\[0\]\.patches\[0\]\.patch\.data\.__proto__$/,
      /not allowed/,
    ],
    [
      "a __proto__ key in a manifest",
      () =>
        callUnary(
          a,
          "applyBundle",
          bundle(
            {},
            new TextEncoder().encode(
              'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata: {"__proto__": {"a": "b"}}\n',
            ),
          ),
        ),
      /^bundle\.manifests\[0\]/,
      /__proto__.*not allowed/,
    ],
    [
      "a strategy 10,000 objects deep",
      () =>
        callUnary(a, "createUpdateStrategy", {
          name: "deep",
          strategyJson: `{"stages":[{"name":"a","memberSelector":{"byLabel":"env=prod"},"x":${deepJson(10_000)}}]}`,
          reason: "",
        }),
      /^strategyJson\.stages\[0\]\.x\.a\.a/,
      /nested more than 128 levels deep/,
    ],
    [
      "a strategy with 10,000 stages",
      () =>
        callUnary(a, "createUpdateStrategy", {
          name: "long",
          strategyJson: stagesJson(10_000),
          reason: "",
        }),
      /^strategyJson\.stages$/,
      new RegExp(`at most ${String(MAX_STAGES)} stages`),
    ],
    [
      "an inline run strategy with 10,000 stages",
      () =>
        callUnary(a, "createUpdateRun", {
          name: "long",
          strategyJson: stagesJson(10_000),
          payload: {
            upgrade: { type: "UPGRADE_TYPE_FULL", kubernetesVersion: "1.30.1" },
          },
          reason: "",
        }),
      /^strategyJson\.stages$/,
      new RegExp(`at most ${String(MAX_STAGES)} stages`),
    ],
    [
      "a preview of a strategy with 10,000 stages",
      () => callUnary(a, "previewPlan", { strategyJson: stagesJson(10_000) }),
      /^strategyJson\.stages$/,
      new RegExp(`at most ${String(MAX_STAGES)} stages`),
    ],
    [
      "a __proto__ key in a strategy",
      () =>
        callUnary(a, "createUpdateStrategy", {
          name: "proto",
          strategyJson:
            '{"__proto__":{"x":1},"stages":[{"name":"a","memberSelector":{"byLabel":"env=prod"}}]}',
          reason: "",
        }),
      /^strategyJson\.__proto__$/,
      /not allowed/,
    ],
    [
      "a constructor key in a strategy stage",
      () =>
        callUnary(a, "createUpdateStrategy", {
          name: "ctor",
          strategyJson:
            '{"stages":[{"name":"a","memberSelector":{"byLabel":"env=prod"},"constructor":{"x":1}}]}',
          reason: "",
        }),
      /^strategyJson\.stages\[0\]\.constructor$/,
      /unknown field/,
    ],
    [
      "20,000 labels set on a cluster",
      () =>
        callUnary(a, "labelCluster", {
          name: "c-1",
          setLabels: labels(20_000),
          reason: "",
        }),
      /^setLabels$/,
      new RegExp(`at most ${String(MAX_LABELS)} labels`),
    ],
    [
      "20,000 labels removed from a cluster",
      () =>
        callUnary(a, "labelCluster", {
          name: "c-1",
          removeLabels: Object.keys(labels(20_000)),
          reason: "",
        }),
      /^removeLabels$/,
      new RegExp(`at most ${String(MAX_LABELS)} labels`),
    ],
    [
      "labels that would give the cluster more than it may have",
      () =>
        callUnary(a, "labelCluster", {
          name: "c-1",
          setLabels: labels(MAX_LABELS),
          reason: "",
        }),
      /^setLabels$/,
      new RegExp(
        `${String(MAX_LABELS + 1)} labels.*at most ${String(MAX_LABELS)}`,
      ),
    ],
    [
      "a __proto__ label",
      () =>
        callUnary(a, "labelCluster", {
          name: "c-1",
          setLabels: JSON.parse('{"__proto__":"x"}') as Record<string, string>,
          reason: "",
        }),
      /^setLabels\.__proto__$/,
      /not allowed/,
    ],
    [
      "a cluster group with 20,000 labels",
      () =>
        callUnary(a, "createClusterGroup", {
          group: { name: "many", labels: labels(20_000) },
          reason: "",
        }),
      /^group\.labels$/,
      new RegExp(`at most ${String(MAX_LABELS)} labels`),
    ],
  ];
};

describe("AdminService input bounds", () => {
  it(`refuses input past the bounds (nesting ${String(MAX_NESTING_DEPTH)}, ${String(MAX_LABELS)} labels, ${String(MAX_STAGES)} stages, __proto__ keys), naming the field, and stores nothing`, async () => {
    const before = await snapshot();
    const failures: string[] = [];
    for (const [label, call, path, message] of cases()) {
      try {
        await call();
        failures.push(`${label}: succeeded`);
      } catch (error) {
        const e = error as {
          code: string;
          message: string;
          problems: readonly { path: string; message: string }[];
        };
        if (e.code !== "invalid_argument") {
          failures.push(`${label}: ${e.code} (${e.message.slice(0, 200)})`);
        } else if (
          !e.problems.some((p) => path.test(p.path) && message.test(p.message))
        ) {
          failures.push(
            `${label}: problems ${JSON.stringify(e.problems).slice(0, 300)} lack ${String(path)} ${String(message)}`,
          );
        }
      }
    }
    expect(failures).toEqual([]);
    expect(await snapshot()).toEqual(before);
    // Still answering, and still taking good input.
    const labelled = await callUnary(hub.admin, "labelCluster", {
      name: "c-1",
      setLabels: { tier: "web" },
      reason: "",
    });
    expect(labelled.cluster?.labels).toMatchObject({
      env: "prod",
      tier: "web",
    });
  });
});
