// Fleet's namespace rules on the hub (docs/semantics.md#namespaces): fleet.yaml `namespace`
// forces objects into one namespace and refuses cluster-scoped ones (nothing stored), per target;
// the legacy wire field and records written before keep meaning the default namespace.
import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { parseBundleContent } from "@flotilla/protocol";
import { BUNDLES, type BundleRecord } from "../src/bundles/bundle-record.js";
import { storedBundleSpec } from "../src/bundles/bundle-input.js";
import {
  bundleSpec,
  cluster,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

const DOCS = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: other}
`;
const CLUSTER_ROLE = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
`;

const manifests = (text: string) => [
  { path: "app.yaml", yaml: Buffer.from(text), content: "yaml" as const },
];

function contentOf(h: Harness, digest: string | undefined) {
  const parsed = parseBundleContent(
    h.publisher.bundleContent(digest ?? "") ?? new Uint8Array(),
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.value;
}

const namespacesOf = (resources: readonly { metadata: object }[]) =>
  resources.map((r) => (r.metadata as { namespace?: string }).namespace);

describe("namespace rules", () => {
  test("namespace forces every namespaced object into it, per target, and warns about the moved ones", async () => {
    await using h = await startHarness([
      cluster("eu-1", { region: "eu" }),
      cluster("us-1", { region: "us" }),
    ]);
    const result = await h.manager.apply(
      bundleSpec({
        manifests: manifests(DOCS),
        defaultNamespace: "apps",
        targetNamespace: "",
        customizations: [{ clusterSelector: "region=eu", namespace: "web-eu" }],
      }),
      "create",
    );
    await h.manager.idle();
    const snapshot = h.publisher.snapshot();
    const eu = contentOf(
      h,
      snapshot.get("eu-1")?.intent.bundles["web"]?.digest,
    );
    const us = contentOf(
      h,
      snapshot.get("us-1")?.intent.bundles["web"]?.digest,
    );
    expect(eu.targetNamespace).toBe("web-eu");
    expect(namespacesOf(eu.resources)).toEqual(["web-eu", "web-eu"]);
    // Without a target namespace: the default goes to the agent, objects keep their own.
    expect(us.targetNamespace).toBeUndefined();
    expect(us.namespace).toBe("apps");
    expect(namespacesOf(us.resources)).toEqual([undefined, "other"]);
    expect(result.bundle.record.contents).toHaveProperty(["apps>web-eu"]);
    expect(result.warnings).toContainEqual({
      code: "NamespaceMovesObject",
      message: expect.stringContaining(
        'bundle.targetCustomizations[0].namespace: ConfigMap other/settings sets namespace "other" but "namespace: web-eu" moves it',
      ) as unknown,
    });
  });

  test("a cluster-scoped object under namespace is INVALID_ARGUMENT naming the rule and the object; nothing stored", async () => {
    await using h = await startHarness([cluster("eu-1", { region: "eu" })]);
    const error: unknown = await h.manager
      .apply(
        bundleSpec({
          manifests: manifests(`${DOCS}---\n${CLUSTER_ROLE}`),
          targetNamespace: "web",
        }),
        "create",
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(FlotillaError);
    const refused = error as FlotillaError;
    expect(refused.code).toBe("invalid_argument");
    expect(refused.problems).toEqual([
      {
        path: "bundle.namespace",
        message: expect.stringContaining(
          'cluster-scoped ClusterRole "reader" (apiVersion rbac.authorization.k8s.io/v1) cannot be deployed: "namespace: web" locks the bundle',
        ) as unknown,
        value: "ClusterRole reader",
      },
    ]);
    expect(refused.problems[0]?.message).toContain('use "defaultNamespace"');
    expect(await h.store.list(BUNDLES)).toEqual([]);
  });

  test("the legacy wire field is the default namespace", async () => {
    await using h = await startHarness([cluster("eu-1", { region: "eu" })]);
    const { bundle } = await h.manager.apply(
      bundleSpec({
        manifests: manifests(`${DOCS}---\n${CLUSTER_ROLE}`),
        namespace: "legacy",
        defaultNamespace: "",
      }),
      "old client",
    );
    expect(bundle.record.defaultNamespace).toBe("legacy");
    expect(bundle.record.targetNamespace).toBe("");
  });

  test("a record written before keeps its meaning: namespace, also in customizations, is the default", () => {
    const old: BundleRecord = {
      name: "web",
      namespace: "web",
      manifests: [],
      targetsJson: JSON.stringify([{ clusterSelector: {} }]),
      targetCustomizationsJson: JSON.stringify([
        { clusterSelector: "region=eu", namespace: "web-eu" },
      ]),
      rolloutStrategyJson: "",
      paused: false,
      revision: "0123456789abcdef",
      contents: { web: "sha256:a", "web-eu": "sha256:b" },
      createdAtMs: 1,
      updatedAtMs: 1,
    };
    const spec = storedBundleSpec(old);
    expect(spec.defaultNamespace).toBe("web");
    expect(spec.targetNamespace).toBe("");
    expect(spec.targetCustomizations[0]).toMatchObject({
      defaultNamespace: "web-eu",
    });
    expect(spec.targetCustomizations[0]?.targetNamespace).toBeUndefined();
    // A record written now reads fleet.yaml's meaning.
    const current = storedBundleSpec({
      ...old,
      defaultNamespace: "apps",
      targetNamespace: "web",
    });
    expect(current).toMatchObject({
      defaultNamespace: "apps",
      targetNamespace: "web",
    });
    expect(current.targetCustomizations[0]?.targetNamespace).toBe("web-eu");
  });
});
