// Renderer input files (BundleSpec.files): path checks, limits, storage by reference, the
// revision, what content collection keeps, and the files handed to a renderer.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  bundleSpecToWire,
  MAX_BUNDLE_CONTENT_BYTES,
  MAX_BUNDLE_FILES,
} from "@flotilla/protocol";
import {
  bundleFileMap,
  bundleFilePathProblem,
  bundleFilesProblems,
  writeBundleFiles,
} from "../src/bundles/bundle-files.js";
import { BUNDLES } from "../src/bundles/bundle-record.js";
import { contentNamesOf } from "../src/bundles/content-references.js";
import {
  bundleSpec,
  clusters,
  refusal,
  startHarness,
} from "./bundles-fixtures.js";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

const inline = (path: string, text: string) => ({
  path,
  yaml: Buffer.from(text),
  content: "yaml" as const,
});

describe("bundleFilePathProblem", () => {
  test.each([
    "Chart.yaml",
    "templates/deployment.yaml",
    "charts/sub/values.yaml",
    ".helmignore",
  ])("accepts %s", (path) => {
    expect(bundleFilePathProblem(path)).toBeUndefined();
  });

  test.each([
    ["/etc/passwd", "relative"],
    ["../secret", ".."],
    ["templates/../../x", ".."],
    ["a//b", "empty"],
    ["./a", "."],
    ["a/", "empty"],
    ["", "empty"],
    ["a\\b", "/"],
    ["x".repeat(300), "at most"],
  ])("refuses %s", (path, says) => {
    expect(bundleFilePathProblem(path)).toContain(says);
  });
});

describe("bundleFilesProblems", () => {
  test("names the path of a file inside another file, the count and the total size", () => {
    const problems = bundleFilesProblems(
      [
        { path: "a", bytes: bytes("x") },
        { path: "a/b", bytes: bytes("y") },
        { path: "../c", bytes: bytes("z") },
      ],
      "bundle.files",
    );
    expect(problems).toEqual([
      {
        path: "bundle.files[1].path",
        message: "is inside a, which is a file of the bundle too",
        value: "a/b",
      },
      {
        path: "bundle.files[2].path",
        message: "must stay inside the bundle directory (no ..)",
        value: "../c",
      },
    ]);
    const many = Array.from({ length: MAX_BUNDLE_FILES + 1 }, (_, i) => ({
      path: `f${String(i)}`,
      bytes: new Uint8Array(0),
    }));
    expect(bundleFilesProblems(many, "bundle.files")).toEqual([
      expect.objectContaining({
        path: "bundle.files",
        message: expect.stringContaining(String(MAX_BUNDLE_FILES)),
      }),
    ]);
    const big = [
      { path: "big", bytes: new Uint8Array(MAX_BUNDLE_CONTENT_BYTES + 1) },
    ];
    expect(bundleFilesProblems(big, "bundle.files")[0]?.message).toContain(
      String(MAX_BUNDLE_CONTENT_BYTES + 1),
    );
  });
});

describe("writeBundleFiles and bundleFileMap", () => {
  test("write the files below a temporary directory, which remove() deletes", async () => {
    const files = [
      { path: "Chart.yaml", bytes: bytes("name: x\n") },
      { path: "templates/a.yaml", bytes: bytes("kind: A\n") },
    ];
    const dir = await writeBundleFiles(files, "chart");
    try {
      expect(
        await readFile(join(dir.path, "chart", "templates", "a.yaml"), "utf8"),
      ).toBe("kind: A\n");
    } finally {
      await dir.remove();
    }
    await expect(
      readFile(join(dir.path, "chart", "Chart.yaml")),
    ).rejects.toThrow();
    expect([...bundleFileMap(files).keys()]).toEqual([
      "Chart.yaml",
      "templates/a.yaml",
    ]);
  });
});

describe("apply with files", () => {
  test("stores the files by reference, in the revision and in what collection keeps", async () => {
    await using h = await startHarness(clusters(1));
    const first = await h.manager.apply(
      bundleSpec({ files: [inline("chart/values.yaml", "replicas: 1\n")] }),
      "first",
    );
    const record = first.bundle.record;
    expect(record.files).toEqual([
      {
        path: "chart/values.yaml",
        digest: expect.stringMatching(/^sha256:/),
        sizeBytes: 12,
      },
    ]);
    const stored = (await h.store.list(BUNDLES))[0]?.value;
    expect(stored?.files).toEqual(record.files);
    const digest = record.files?.[0]?.digest ?? "";
    expect(contentNamesOf(record, (d) => d)).toContain(digest);
    expect(h.publisher.bundleContent(digest)).toEqual(bytes("replicas: 1\n"));
    expect(bundleSpecToWire(record).files).toEqual([
      {
        path: "chart/values.yaml",
        object: { digest, sizeBytes: 12 },
      },
    ]);

    const same = await h.manager.apply(
      bundleSpec({ files: [inline("chart/values.yaml", "replicas: 1\n")] }),
      "again",
    );
    expect(same.changed).toBe(false);
    const changed = await h.manager.apply(
      bundleSpec({ files: [inline("chart/values.yaml", "replicas: 2\n")] }),
      "a file changed",
    );
    expect(changed.changed).toBe(true);
    expect(changed.bundle.record.revision).not.toBe(record.revision);
  });

  test("a bundle without files keeps its record and revision as before files existed", async () => {
    await using h = await startHarness(clusters(1));
    const applied = await h.manager.apply(bundleSpec(), "plain");
    expect(applied.bundle.record).not.toHaveProperty("files");
  });

  test("refuses bad paths, duplicates and missing objects with their field paths, storing nothing", async () => {
    await using h = await startHarness(clusters(1));
    const error = await refusal(
      h.manager.apply(
        bundleSpec({
          files: [
            inline("../outside", "x"),
            inline("a.txt", "x"),
            inline("a.txt", "y"),
            {
              path: "b.tgz",
              object: { digest: `sha256:${"0".repeat(64)}`, sizeBytes: 3 },
              content: "object",
            },
          ],
        }),
        "bad",
      ),
    );
    expect(error.code).toBe("invalid_argument");
    expect(error.problems.map((p) => [p.path, p.value])).toEqual([
      ["bundle.files[2].path", "a.txt"],
      ["bundle.files[3].object.digest", `sha256:${"0".repeat(64)}`],
      ["bundle.files[0].path", "../outside"],
    ]);
    expect(await h.store.list(BUNDLES)).toEqual([]);
  });
});
