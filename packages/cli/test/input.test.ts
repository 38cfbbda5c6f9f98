import { formatProblem, formatProblems } from "@flotilla/core";
import { describe, expect, it } from "vitest";
import {
  describeReadError,
  loadDocument,
  loadDocuments,
  parseDocumentText,
} from "../src/input.js";
import { memoryIo } from "./fixtures.js";

describe("parseDocumentText", () => {
  it("reads YAML", () => {
    expect(
      parseDocumentText("a.yaml", "- name: c-1\n  labels: {env: prod}\n"),
    ).toEqual({
      ok: true,
      value: [{ name: "c-1", labels: { env: "prod" } }],
    });
  });

  it("reads JSON with the same parser", () => {
    expect(
      parseDocumentText(
        "s.json",
        '{"stages": [{"name": "canary", "maxConcurrency": "25%"}]}',
      ),
    ).toEqual({
      ok: true,
      value: { stages: [{ name: "canary", maxConcurrency: "25%" }] },
    });
  });

  it("keeps times and versions as strings (YAML 1.2 core schema)", () => {
    const parsed = parseDocumentText(
      "c.yaml",
      "startTime: 22:00\nstart: 2026-03-02T09:00:00Z\nv: 1.30\n",
    );
    expect(parsed).toEqual({
      ok: true,
      value: { startTime: "22:00", start: "2026-03-02T09:00:00Z", v: 1.3 },
    });
  });

  it("reports a syntax error as FILE:LINE:COL with the offending line and a caret", () => {
    const parsed = parseDocumentText(
      "clusters.yaml",
      "- name: a\n- name: b\n  labels: {env: prod\n",
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(formatProblem(parsed.problems[0]!)).toMatch(
      /^clusters\.yaml:\d+:\d+: \S/,
    );
  });

  it("points at the duplicate key in malformed JSON", () => {
    const parsed = parseDocumentText(
      "s.json",
      '{\n  "stages": [],\n  "stages": []\n}',
    );
    expect(parsed).toEqual({
      ok: false,
      problems: [
        {
          path: "s.json:3:3",
          message: 'Map keys must be unique\n    "stages": []\n    ^',
        },
      ],
    });
    if (!parsed.ok)
      expect(formatProblems(parsed.problems).split("\n")).toEqual([
        "s.json:3:3: Map keys must be unique",
        '    "stages": []',
        "    ^",
      ]);
  });

  it("rejects an empty file instead of passing null on", () => {
    expect(parseDocumentText("e.yaml", "# nothing here\n")).toEqual({
      ok: false,
      problems: [
        {
          path: "e.yaml",
          message: "is empty (expected a YAML or JSON document)",
        },
      ],
    });
  });

  it("reports an unresolved alias with the file name", () => {
    const parsed = parseDocumentText("a.yaml", "x: *nope\n");
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(formatProblems(parsed.problems)).toMatch(/^a\.yaml(:\d+:\d+)?: /);
  });
});

describe("loadDocument", () => {
  it("reports a missing file as FILE: cannot read", async () => {
    expect(await loadDocument(memoryIo(), "nope.yaml")).toEqual({
      ok: false,
      problems: [{ path: "nope.yaml", message: "cannot read: no such file" }],
    });
  });

  it("collects the problems of every file at once", async () => {
    const io = memoryIo({ "bad.yaml": "a: [1,\n" });
    const loaded = await loadDocuments(io, {
      clusters: "missing.yaml",
      strategy: "bad.yaml",
    });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    const lines = loaded.problems.map(formatProblem);
    expect(lines[0]).toBe("missing.yaml: cannot read: no such file");
    expect(lines[1]).toMatch(/^bad\.yaml:\d+:\d+: /);
  });
});

describe("describeReadError", () => {
  it("names common causes in words and passes others through", () => {
    expect(
      describeReadError(Object.assign(new Error("x"), { code: "EISDIR" })),
    ).toBe("is a directory");
    expect(
      describeReadError(Object.assign(new Error("x"), { code: "EACCES" })),
    ).toBe("permission denied");
    expect(describeReadError(new Error("disk on fire"))).toBe("disk on fire");
  });
});
