/**
 * docs/bundles.md#fleetyaml-keys lists every fleet.yaml key flotilla reads, and every Fleet key it
 * refuses with the reason the refusal gives: the tables must say what core's parser does.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  REFUSED_HELM_KEYS,
  SUPPORTED_BUNDLE_KEYS,
  UNSUPPORTED_FLEET_KEYS,
} from "@flotilla/core";
import { describe, expect, it } from "vitest";
import { ROOT } from "./repo-text.js";

/** The rows (first cell's key, second cell) of the table whose header cells are `header`. */
function table(
  markdown: string,
  header: readonly [string, string],
): Map<string, string> {
  const lines = markdown.split("\n");
  const cellsOf = (line: string): string[] =>
    line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim());
  const start = lines.findIndex(
    (l) => l.startsWith("|") && cellsOf(l).join("|") === header.join("|"),
  );
  if (start < 0) throw new Error(`no table headed ${header.join(" | ")}`);
  const rows = new Map<string, string>();
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const cells = cellsOf(line);
    const key = /^`([^`]+)`$/.exec(cells[0] ?? "")?.[1];
    if (key === undefined) throw new Error(`a row without a key: ${line}`);
    rows.set(key, (cells[1] ?? "").replaceAll("\\|", "|"));
  }
  return rows;
}

const doc = readFileSync(join(ROOT, "docs", "bundles.md"), "utf8");
const section = doc.slice(doc.indexOf("\n## fleet.yaml keys\n"));

describe("docs/bundles.md#fleetyaml-keys", () => {
  it("lists every key the parser reads", () => {
    expect([...table(section, ["key", "what it does"]).keys()].sort()).toEqual(
      [...SUPPORTED_BUNDLE_KEYS].sort(),
    );
  });

  it("lists every refused Fleet key with the refusal's reason", () => {
    expect(
      Object.fromEntries(table(section, ["key", "why flotilla refuses it"])),
    ).toEqual(UNSUPPORTED_FLEET_KEYS);
  });

  it("lists every refused helm key with the refusal's reason", () => {
    const reasons = Object.fromEntries(
      Object.entries(REFUSED_HELM_KEYS).map(([k, v]) => [
        k,
        v.replace(/^is not supported: /, ""),
      ]),
    );
    expect(
      Object.fromEntries(
        table(section, ["`helm` key", "why flotilla refuses it"]),
      ),
    ).toEqual(reasons);
  });
});
