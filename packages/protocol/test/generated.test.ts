import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const generated = join(root, "packages/protocol/src/generated");

function check(...args: string[]): { status: number | null; stderr: string } {
  const result = spawnSync(
    "bash",
    ["scripts/gen-proto.sh", "--check", ...args],
    { cwd: root, encoding: "utf8" },
  );
  return { status: result.status, stderr: result.stderr };
}

describe("generated types", () => {
  it("match the protos (scripts/gen-proto.sh --check)", () => {
    const result = check();
    expect(result.stderr).toContain("up to date");
    expect(result.status).toBe(0);
  });

  it("are reported stale when they differ from a fresh generation", () => {
    const dir = mkdtempSync(join(tmpdir(), "flotilla-gen-"));
    try {
      const copy = join(dir, "generated");
      cpSync(generated, copy, { recursive: true });
      appendFileSync(join(copy, "flotilla/v1/Hello.ts"), "// edited by hand\n");
      const result = check(copy);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("is stale");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
