import { mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { isProcessEntry } from "@flotilla/node";
import { describe, expect, it } from "vitest";

describe("isProcessEntry", () => {
  const dir = mkdtempSync(join(tmpdir(), "process-entry-"));
  const main = join(dir, "main.js");
  writeFileSync(main, "");
  const link = join(dir, "flotilla");
  symlinkSync(main, link);
  const url = pathToFileURL(main).href;

  it("is true for the script itself and for a bin symlink to it", () => {
    expect(isProcessEntry(url, main)).toBe(true);
    expect(isProcessEntry(url, link)).toBe(true);
  });

  it("is false for another script, a missing one, or none", () => {
    expect(isProcessEntry(url, join(dir, "other.js"))).toBe(false);
    expect(isProcessEntry(url, undefined)).toBe(false);
    writeFileSync(join(dir, "other.js"), "");
    expect(isProcessEntry(url, join(dir, "other.js"))).toBe(false);
  });
});
