// Manifest files → Kubernetes objects: documents, lines in messages, lists, duplicates, Helm hints.
import { describe, expect, test } from "vitest";
import { parseManifestObjects } from "../src/bundles/manifest-objects.js";
import { configMap } from "./bundles-fixtures.js";

const file = (path: string, text: string, index = 0) => ({
  path,
  bytes: new TextEncoder().encode(text),
  field: `bundle.manifests[${String(index)}]`,
});

function problemsOf(...files: ReturnType<typeof file>[]) {
  const parsed = parseManifestObjects(files, "bundle.manifests");
  if (parsed.ok) throw new Error("accepted");
  return parsed.problems;
}

describe("parseManifestObjects", () => {
  test("reads several documents per file, JSON lists and kind: List, in order", () => {
    const parsed = parseManifestObjects(
      [
        file(
          "a.json",
          `${configMap("1", "a")}\n---\n\n--- # empty one\n${configMap("1", "b")}`,
        ),
        file("b.json", `[${configMap("1", "c")}, ${configMap("1", "d")}]`, 1),
        file(
          "c.json",
          `{"apiVersion":"v1","kind":"List","items":[${configMap("1", "e")}]}`,
          2,
        ),
      ],
      "bundle.manifests",
    );
    expect(parsed.ok && parsed.value.map((o) => o.metadata.name)).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
    ]);
  });

  test("reads YAML documents, with comments, anchors and merge keys", () => {
    const yaml = [
      "# the app",
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata:",
      "  name: app",
      "data:",
      '  enabled: "yes"',
      "---",
      "apiVersion: v1",
      "kind: Secret",
      "metadata:",
      "  name: app",
      "  labels: &labels {app: web}",
      "  annotations:",
      "    <<: *labels",
      "    team: core",
      "stringData: {token: abc}",
      "",
    ].join("\n");
    const parsed = parseManifestObjects(
      [file("app.yaml", yaml)],
      "bundle.manifests",
    );
    expect(parsed.ok && parsed.value).toEqual([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "app" },
        data: { enabled: "yes" },
      },
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: "app",
          labels: { app: "web" },
          annotations: { app: "web", team: "core" },
        },
        stringData: { token: "abc" },
      },
    ]);
  });

  test("names the file, line and column of a YAML error", () => {
    const [problem] = problemsOf(
      file(
        "deploy/app.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n data: x\n",
      ),
    );
    expect(problem).toEqual({
      path: "bundle.manifests[0]",
      message:
        '"deploy/app.yaml" line 5: column 1: All mapping items must start at the same column',
    });
    const [duplicate] = problemsOf(
      file("b.yaml", `${configMap("1")}\n---\nkind: A\nkind: B\n`),
    );
    expect(duplicate?.message).toBe(
      '"b.yaml" line 13: column 1: Map keys must be unique',
    );
  });

  test("the line of an object's problem is its document's first line", () => {
    const [problem] = problemsOf(
      file("c.yaml", `${configMap("1")}\n---\n# note\n\nkind: Secret\n`),
    );
    expect(problem?.message).toMatch(
      /^"c.yaml" line 14: is not a Kubernetes object/,
    );
  });

  test("refuses documents that are not Kubernetes objects, naming what is missing", () => {
    const problems = problemsOf(
      file(
        "x.json",
        `{"kind":"ConfigMap","metadata":{"name":"a"}}\n---\n[1]\n---\n{"apiVersion":"v1","kind":"X","metadata":{"name":"n","namespace":7}}`,
      ),
    );
    expect(problems.map((p) => p.message)).toEqual([
      '"x.json" line 1: is not a Kubernetes object: apiVersion is missing or not a string',
      '"x.json" line 3: item 0: is not a Kubernetes object (a map with apiVersion, kind and metadata)',
      '"x.json" line 5: metadata.namespace must be a string of at most 63 characters',
    ]);
  });

  test("refuses an object defined twice across files, pointing at the first", () => {
    const problems = problemsOf(
      file("a.json", configMap("1")),
      file("b.json", `\n\n${configMap("2")}`, 1),
    );
    expect(problems).toEqual([
      {
        path: "bundle.manifests[1]",
        message:
          '"b.json" line 3: ConfigMap "app" is already defined at "a.json" line 1',
      },
    ]);
    // The same name in another namespace or of another kind is another object.
    const parsed = parseManifestObjects(
      [
        file("a.json", configMap("1")),
        file(
          "b.json",
          JSON.stringify({
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: "app" },
          }),
          1,
        ),
        file(
          "c.json",
          JSON.stringify({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "app", namespace: "x" },
          }),
          2,
        ),
      ],
      "bundle.manifests",
    );
    expect(parsed.ok).toBe(true);
  });

  test("recognises Helm charts and templates given as plain manifests and points at Helm bundles", () => {
    const problems = problemsOf(
      file("chart/Chart.yaml", "apiVersion: v2\nname: web\n"),
      file(
        "chart/templates/cm.yaml",
        'apiVersion: v1\nkind: ConfigMap\ndata:\n  replicas: "{{ .Values.replicas }}"\n',
        1,
      ),
    );
    expect(problems.map((p) => [p.path, p.message.split(": ")[0]])).toEqual([
      ["bundle.manifests[0]", '"chart/Chart.yaml" line 1'],
      ["bundle.manifests[1]", '"chart/templates/cm.yaml" line 4'],
    ]);
    for (const p of problems)
      expect(p.message).toMatch(
        /looks like a Helm chart given as plain manifests/,
      );
  });

  test("refuses bytes that are not UTF-8", () => {
    const [problem] = problemsOf({
      path: "bin",
      bytes: new Uint8Array([0xff, 0xfe]),
      field: "bundle.manifests[0]",
    });
    expect(problem?.message).toBe('"bin" line 1: is not UTF-8 text');
  });
});
