import { describe, expect, it } from "vitest";
import { parseBundleSpec } from "../src/fleet/bundle-spec.js";
import {
  customizeManifests,
  type ManifestObject,
} from "../src/fleet/customize.js";
import { applyMergePatch } from "../src/fleet/merge-patch.js";

describe("applyMergePatch (RFC 7386)", () => {
  // The examples of RFC 7386 appendix A: [target, patch, result].
  const table: [unknown, unknown, unknown][] = [
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"],
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  it.each(table)("%j patched with %j is %j", (target, patch, result) => {
    expect(applyMergePatch(target, patch)).toEqual(result);
  });

  it("leaves its inputs unchanged and keeps a __proto__ key a plain key", () => {
    const target = { a: { b: 1 } };
    const patch = JSON.parse('{"a":{"c":2},"__proto__":{"x":1}}') as unknown;
    const out = applyMergePatch(target, patch) as Record<string, unknown>;
    expect(target).toEqual({ a: { b: 1 } });
    expect(out["a"]).toEqual({ b: 1, c: 2 });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toContain("__proto__");
  });
});

const deployment: ManifestObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", labels: { app: "web" } },
  spec: { replicas: 2, template: { spec: { containers: [{ name: "web" }] } } },
};
const config: ManifestObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "web", namespace: "shared" },
  data: { mode: "normal", debug: "true" },
};

describe("customizeManifests", () => {
  it("applies each patch, in order, to the objects its target names", () => {
    const result = customizeManifests([deployment, config], {
      patches: [
        {
          target: { kind: "Deployment", name: "web" },
          patch: { spec: { replicas: 5 }, metadata: { labels: { tier: "x" } } },
        },
        {
          target: { kind: "ConfigMap", name: "web", namespace: "shared" },
          patch: { data: { debug: null, mode: "eu" } },
        },
        {
          target: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
          patch: { spec: { replicas: 7 } },
        },
      ],
    });
    expect(result).toEqual({
      ok: true,
      value: [
        {
          ...deployment,
          metadata: { name: "web", labels: { app: "web", tier: "x" } },
          spec: {
            replicas: 7,
            template: { spec: { containers: [{ name: "web" }] } },
          },
        },
        { ...config, data: { mode: "eu" } },
      ],
    });
    expect(deployment.spec).toEqual({
      replicas: 2,
      template: { spec: { containers: [{ name: "web" }] } },
    });
  });

  it("matches an object without a namespace by the default namespace", () => {
    const patch = {
      target: { kind: "Deployment", name: "web", namespace: "eu" },
      patch: { x: 1 },
    };
    const viaCustomization = customizeManifests([deployment], {
      defaultNamespace: "eu",
      patches: [patch],
    });
    expect(viaCustomization.ok && viaCustomization.value[0]?.["x"]).toBe(1);
    const viaBundle = customizeManifests(
      [deployment],
      { patches: [patch] },
      { bundleNamespace: "eu" },
    );
    expect(viaBundle.ok && viaBundle.value[0]?.["x"]).toBe(1);
  });

  it("refuses a patch whose target matches nothing, naming the patch", () => {
    const result = customizeManifests(
      [deployment, config],
      {
        patches: [
          { target: { kind: "Deployment", name: "web" }, patch: { a: 1 } },
          { target: { kind: "Deployment", name: "api" }, patch: { a: 1 } },
          {
            target: { kind: "ConfigMap", name: "web", namespace: "other" },
            patch: { a: 1 },
          },
          {
            target: { apiVersion: "apps/v2", kind: "Deployment", name: "web" },
            patch: { a: 1 },
          },
        ],
      },
      { path: "bundle.targetCustomizations[2]" },
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => p.path)).toEqual([
      "bundle.targetCustomizations[2].patches[1].target",
      "bundle.targetCustomizations[2].patches[2].target",
      "bundle.targetCustomizations[2].patches[3].target",
    ]);
    expect(result.problems[0]?.message).toContain(
      'kind "Deployment", name "api"',
    );
  });

  it("refuses a patch that changes the identity of what it patches", () => {
    const result = customizeManifests([deployment], {
      patches: [
        {
          target: { kind: "Deployment", name: "web" },
          patch: { metadata: { name: "x" } },
        },
      ],
    });
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          path: "patches[0].patch.metadata.name",
          value: "x",
          message: expect.stringContaining(
            "must not change the object's name",
          ) as unknown,
        },
      ],
    });
  });

  it("returns the manifests as they are without patches", () => {
    expect(customizeManifests([deployment], {})).toEqual({
      ok: true,
      value: [deployment],
    });
  });
});

describe("parseBundleSpec targetCustomizations[].patches", () => {
  const base = {
    targets: [{ clusterSelector: {} }],
  };
  it("reads patches and leaves them unset when none are given", () => {
    const parsed = parseBundleSpec({
      ...base,
      targetCustomizations: [
        {
          clusterSelector: { matchLabels: { region: "eu" } },
          patches: [
            {
              target: {
                apiVersion: "apps/v1",
                kind: "Deployment",
                name: "web",
                namespace: "web",
              },
              patch: { spec: { replicas: 3 } },
            },
            {
              target: { kind: "ConfigMap", name: "c", apiVersion: null },
              patch: {},
            },
          ],
        },
        { clusterName: "a", patches: [] },
      ],
    });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.targetCustomizations[0]?.patches).toEqual([
      {
        target: {
          apiVersion: "apps/v1",
          kind: "Deployment",
          name: "web",
          namespace: "web",
        },
        patch: { spec: { replicas: 3 } },
      },
      { target: { kind: "ConfigMap", name: "c" }, patch: {} },
    ]);
    expect(parsed.value.targetCustomizations[1]).not.toHaveProperty("patches");
  });

  it("reports every bad patch with its field path", () => {
    const parsed = parseBundleSpec(
      {
        ...base,
        targetCustomizations: [
          { clusterName: "a" },
          {
            clusterName: "b",
            patches: [
              { target: { name: "web" }, patch: { a: 1 } },
              {
                target: { kind: "Deployment", name: "web", nmespace: "x" },
                patch: [1],
              },
              {
                target: { kind: "Deployment", name: "web" },
                patch: { kind: "Service" },
              },
              {
                target: { kind: "Deployment", name: "web" },
                patch: { metadata: { namespace: null } },
              },
              {
                target: {
                  kind: "Deployment",
                  name: "web",
                  namespace: "Bad_NS",
                },
              },
            ],
          },
        ],
      },
      "bundle",
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const paths = parsed.problems.map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "bundle.targetCustomizations[1].patches[0].target.kind",
        "bundle.targetCustomizations[1].patches[1].target.nmespace",
        "bundle.targetCustomizations[1].patches[1].patch",
        "bundle.targetCustomizations[1].patches[2].patch.kind",
        "bundle.targetCustomizations[1].patches[3].patch.metadata.namespace",
        "bundle.targetCustomizations[1].patches[4].target.namespace",
        "bundle.targetCustomizations[1].patches[4].patch",
      ]),
    );
    expect(paths).toHaveLength(7);
  });
});
