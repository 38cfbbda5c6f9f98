import { describe, expect, it } from "vitest";
import { formatProblems } from "@flotilla/core";
import { runTool } from "../src/tools/run-tool.js";

const node = process.execPath;

function message(result: Awaited<ReturnType<typeof runTool>>): string {
  if (result.ok) throw new Error("expected a failure");
  return formatProblems(result.problems);
}

describe("runTool", () => {
  it("returns what the tool printed, with its input and environment", async () => {
    const result = await runTool(
      node,
      [
        "-e",
        "process.stdin.pipe(process.stdout); process.stderr.write(process.env.X_TOOL_TEST ?? '')",
      ],
      { input: "a: 1\n", env: { X_TOOL_TEST: "seen" } },
    );
    expect(result).toEqual({
      ok: true,
      value: { stdout: "a: 1\n", stderr: "seen" },
    });
  });

  it("fails with the tool's name, its standard error and its exit status", async () => {
    const result = await runTool("/bin/sh", [
      "-c",
      "echo 'Error: chart not found' >&2; exit 3",
    ]);
    expect(message(result)).toContain(
      "sh -c: Error: chart not found (exit status 3)",
    );
  });

  it("says how to install a tool that is not there", async () => {
    const result = await runTool("flotilla-no-such-tool", ["template"], {
      configuredBy: "--helm",
    });
    expect(message(result)).toContain(
      "flotilla-no-such-tool template: flotilla-no-such-tool is not installed (not found on PATH); install it, or set --helm",
    );
  });

  it("kills a tool that runs too long or prints too much", async () => {
    const slow = await runTool(node, ["-e", "setInterval(() => {}, 1000)"], {
      timeoutMs: 200,
    });
    expect(message(slow)).toContain("did not finish within 200 ms");
    const loud = await runTool(
      node,
      ["-e", "process.stdout.write('x'.repeat(100000))"],
      { maxOutputBytes: 1000 },
    );
    expect(message(loud)).toContain("printed more than 1000 bytes");
  });

  it("stops when aborted", async () => {
    const controller = new AbortController();
    const running = runTool(node, ["-e", "setInterval(() => {}, 1000)"], {
      signal: controller.signal,
    });
    controller.abort();
    expect(message(await running)).toContain("aborted");
  });
});
