import { describe, expect, it } from "vitest";
import {
  builtInNamespaced,
  movedMessage,
  placeObjects,
  type NamespacedPredicate,
} from "../src/fleet/namespace-rules.js";
import type { ManifestObject } from "../src/fleet/customize.js";

const obj = (
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
): ManifestObject => ({
  apiVersion,
  kind,
  metadata: namespace === undefined ? { name } : { name, namespace },
});

const deployment = obj("apps/v1", "Deployment", "web");
const pinned = obj("v1", "ConfigMap", "settings", "other");
const role = obj("rbac.authorization.k8s.io/v1", "ClusterRole", "reader");
const widget = obj("example.com/v1", "Widget", "w");

const namespaces = (objects: readonly ManifestObject[]): unknown[] =>
  objects.map((o) => o.metadata.namespace);

describe("placeObjects", () => {
  it("defaultNamespace sets the namespace of namespaced objects that set none, and only theirs", () => {
    const placed = placeObjects(
      [deployment, pinned, role],
      { defaultNamespace: "apps", targetNamespace: "" },
      builtInNamespaced,
    );
    expect(placed.ok && namespaces(placed.value.objects)).toEqual([
      "apps",
      "other",
      undefined,
    ]);
    expect(placed.ok && placed.value.moved).toEqual([]);
  });

  it("namespace forces every namespaced object into it, even one that sets another, and says which moved", () => {
    const placed = placeObjects(
      [deployment, pinned],
      { defaultNamespace: "apps", targetNamespace: "web" },
      builtInNamespaced,
      "bundle.namespace",
    );
    if (!placed.ok) throw new Error(JSON.stringify(placed.problems));
    expect(namespaces(placed.value.objects)).toEqual(["web", "web"]);
    expect(placed.value.moved).toEqual([
      {
        path: "bundle.namespace",
        object: "ConfigMap other/settings",
        from: "other",
        to: "web",
      },
    ]);
    expect(movedMessage(placed.value.moved[0]!)).toContain(
      'use "defaultNamespace" to keep the namespaces objects set',
    );
    // The inputs are left as they were.
    expect(pinned.metadata.namespace).toBe("other");
  });

  it("namespace refuses a cluster-scoped object, as Fleet does, pointing at defaultNamespace", () => {
    const placed = placeObjects(
      [deployment, role],
      { defaultNamespace: "", targetNamespace: "web" },
      builtInNamespaced,
      "bundle.targetCustomizations[1].namespace",
    );
    expect(placed.ok).toBe(false);
    if (placed.ok) return;
    expect(placed.problems).toHaveLength(1);
    const [problem] = placed.problems;
    expect(problem?.path).toBe("bundle.targetCustomizations[1].namespace");
    expect(problem?.value).toBe("ClusterRole reader");
    expect(problem?.message).toContain(
      'cluster-scoped ClusterRole "reader" (apiVersion rbac.authorization.k8s.io/v1) cannot be deployed',
    );
    expect(problem?.message).toContain("forbids cluster-scoped objects");
    expect(problem?.message).toContain(
      `use "defaultNamespace" (what flotilla's "namespace" meant before)`,
    );
  });

  it("leaves kinds the predicate cannot tell for a caller that can (the agent, by discovery)", () => {
    const placed = placeObjects(
      [widget],
      { defaultNamespace: "apps", targetNamespace: "web" },
      builtInNamespaced,
    );
    expect(placed.ok && placed.value.objects[0]).toBe(widget);
    const discovered: NamespacedPredicate = (_, kind) => kind !== "Widget";
    const byDiscovery = placeObjects(
      [widget],
      { defaultNamespace: "", targetNamespace: "web" },
      discovered,
    );
    expect(byDiscovery.ok).toBe(false);
  });

  it("keeps a cluster-scoped object's namespace alone without a target namespace", () => {
    const placed = placeObjects(
      [obj("v1", "Namespace", "web")],
      { defaultNamespace: "apps", targetNamespace: "" },
      builtInNamespaced,
    );
    expect(placed.ok && namespaces(placed.value.objects)).toEqual([undefined]);
  });
});

describe("builtInNamespaced", () => {
  it("knows built-in kinds by group and leaves the others undefined", () => {
    expect(builtInNamespaced("apps/v1", "Deployment")).toBe(true);
    expect(builtInNamespaced("v1", "Namespace")).toBe(false);
    expect(builtInNamespaced("rbac.authorization.k8s.io/v1", "Role")).toBe(
      true,
    );
    expect(builtInNamespaced("example.com/v1", "Deployment")).toBeUndefined();
  });
});
