/**
 * The repository's own text files, for the checks that comments and documents only point at
 * things inside the repository: which files are scanned, their lines, and the anchors a Markdown
 * file offers (explicit `<a id="…">` and GitHub's heading slugs).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root directory. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const SCANNED = [
  "packages",
  "test",
  "bench",
  "scripts",
  "proto",
  "docs",
  "deploy",
  "examples",
  "README.md",
  "eslint.config.js",
];
const SKIPPED_DIRS = new Set([
  "node_modules",
  "dist",
  "results",
  "coverage",
  ".git",
]);
const EXTENSIONS = /\.(ts|mts|cts|js|mjs|cjs|proto|md|sh|ya?ml|json|tpl|txt)$/;

/** Every scanned file, as a path relative to the root with forward slashes. */
export function repoFiles(): string[] {
  const out: string[] = [];
  const walk = (path: string): void => {
    if (statSync(path).isFile()) {
      if (EXTENSIONS.test(path))
        out.push(relative(ROOT, path).split("\\").join("/"));
      return;
    }
    for (const entry of readdirSync(path)) {
      if (!SKIPPED_DIRS.has(entry)) walk(join(path, entry));
    }
  };
  for (const top of SCANNED) walk(join(ROOT, top));
  return out.sort();
}

/** A file's lines, 1-based through `line`. */
export function linesOf(file: string): { line: number; text: string }[] {
  return readFileSync(join(ROOT, file), "utf8")
    .split("\n")
    .map((text, i) => ({ line: i + 1, text }));
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors a Markdown document offers: explicit ids and heading slugs (repeats get -1, -2…). */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const text of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    if (fenced) continue;
    for (const m of text.matchAll(/\b(?:id|name)="([^"]+)"/g))
      anchors.add(m[1] ?? "");
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading === null) continue;
    const slug = headingSlug(heading[1] ?? "");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${String(n)}`);
  }
  return anchors;
}
