/**
 * Comments, test names and documents cite only what is in the repository: no section numbers of
 * an outside specification, no outside architecture or style documents, no vendor study, and no
 * tracker issue numbers. Each finding names the file and line.
 */
import { describe, expect, it } from "vitest";
import { linesOf, repoFiles } from "./repo-text.js";

const THIS_CHECK = new Set(["test/docs/citations.test.ts"]);

const OUTSIDE = [
  { what: "an outside specification", pattern: /\bSPEC\b(?!_)/ },
  {
    what: "an outside architecture document",
    pattern: /(?<![\w/])ARCHITECTURE(\.md)?\b/,
  },
  { what: "an outside style guide", pattern: /(?<![\w/])STYLE(\.md\b|:|\s+")/ },
  {
    what: "the vendor study",
    pattern: /(?<![\w-])(?:docs\/)?reference\/[\w.-]+/,
  },
  { what: "an issue number", pattern: /\b[Ii]ssues? #?\d+/ },
  { what: "a section sign", pattern: /§\s?\d/ },
];

/** Every line of `files` that cites something outside the repository, as `file:line: text`. */
export function outsideCitations(files: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    if (THIS_CHECK.has(file)) continue;
    for (const { line, text } of linesOf(file)) {
      for (const { what, pattern } of OUTSIDE) {
        if (pattern.test(text))
          found.push(`${file}:${String(line)}: ${what}: ${text.trim()}`);
      }
    }
  }
  return found;
}

describe("citations", () => {
  it("point only at documents inside the repository", () => {
    expect(outsideCitations(repoFiles())).toEqual([]);
  });
});
