/**
 * Every `docs/<file>.md`, `docs/<file>.md#anchor` and `CONTRIBUTING.md` named in a comment or a document, and every
 * relative link between the Markdown files of docs/, leads to a file that exists and to an anchor
 * that file offers (an explicit id or a heading). Each broken reference names the file and line.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, anchorsOf, linesOf, repoFiles } from "./repo-text.js";

const anchorCache = new Map<string, Set<string>>();
function anchors(doc: string): Set<string> {
  let found = anchorCache.get(doc);
  if (found === undefined) {
    found = anchorsOf(readFileSync(join(ROOT, doc), "utf8"));
    anchorCache.set(doc, found);
  }
  return found;
}

/** The problem with a reference to `doc` (a path from the root) and `anchor`, if any. */
function problem(doc: string, anchor: string | undefined): string | undefined {
  if (!existsSync(join(ROOT, doc))) {
    return `${doc} does not exist`;
  }
  if (anchor === undefined || anchor === "") return undefined;
  return anchors(doc).has(anchor)
    ? undefined
    : `${doc} has no anchor #${anchor}`;
}

/** The references of one line of `file`: repository paths, and relative links in Markdown. */
function referencesOn(
  file: string,
  text: string,
): { doc: string; anchor?: string }[] {
  const refs: { doc: string; anchor?: string }[] = [];
  for (const m of text.matchAll(
    /(?<![\w/.-])(docs\/[\w-]+\.md|CONTRIBUTING\.md)(?:#([\w-]+))?/g,
  )) {
    refs.push({ doc: m[1] ?? "", anchor: m[2] });
  }
  if (file.endsWith(".md")) {
    for (const m of text.matchAll(/\]\(([\w./-]*\.md)?(?:#([\w-]+))?\)/g)) {
      const target = m[1];
      if (target !== undefined && /(^|\/)docs\//.test(target)) continue;
      if (target === undefined && m[2] === undefined) continue;
      const doc =
        target === undefined
          ? file
          : normalize(join(dirname(file), target))
              .split("\\")
              .join("/");
      if (doc.startsWith("..")) continue;
      refs.push({ doc, anchor: m[2] });
    }
  }
  return refs;
}

/** Every broken reference in `files`, as `file:line: problem`. */
export function brokenReferences(files: readonly string[]): string[] {
  const broken: string[] = [];
  for (const file of files) {
    if (file === "test/docs/references.test.ts") continue;
    for (const { line, text } of linesOf(file)) {
      for (const { doc, anchor } of referencesOn(file, text)) {
        const why = problem(doc, anchor);
        if (why !== undefined) broken.push(`${file}:${String(line)}: ${why}`);
      }
    }
  }
  return broken;
}

describe("references to docs/", () => {
  it("lead to files and anchors that exist", () => {
    expect(brokenReferences(repoFiles())).toEqual([]);
  });

  it("find GitHub's heading slugs and explicit ids", () => {
    const doc =
      '# Rollout semantics\n\n<a id="limit-zero"></a>\n\n### Node pools: `a` & b\n## x\n## x\n';
    expect([...anchorsOf(doc)].sort()).toEqual(
      ["limit-zero", "node-pools-a--b", "rollout-semantics", "x", "x-1"].sort(),
    );
  });
});
