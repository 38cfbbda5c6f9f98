/**
 * The built `flotilla` binary holds the files it reads to core's input bounds: a document nested
 * deeper than MAX_NESTING_DEPTH, a `__proto__` key, a strategy with more than MAX_STAGES stages and
 * a cluster with more than MAX_LABELS labels are bad input (exit 2), named by file and path; a
 * cluster may still be named like a property every JavaScript object inherits.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_LABELS } from "@flotilla/core";
import { MAX_NESTING_DEPTH, MAX_STAGES } from "@flotilla/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBuiltCli, type CliResult } from "./built-cli.js";

let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-bounds-"));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

function flotilla(args: string[]): Promise<CliResult> {
  return runBuiltCli(args, { cwd: work });
}

async function file(name: string, content: string): Promise<string> {
  await writeFile(join(work, name), content);
  return name;
}

const CLUSTERS = "- {name: c-01, labels: {env: prod}}\n";
const stage = (name: string) => ({
  name,
  memberSelector: { byLabel: "env=prod" },
});

describe("flotilla plan refuses files past the input bounds", () => {
  it("names the file of a strategy nested 10,000 levels deep", async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    const strategy = await file(
      "deep.json",
      `{"stages":[{"name":"a","memberSelector":{"byLabel":"env=prod"},"x":${deep}}]}`,
    );
    const result = await flotilla([
      "plan",
      "--clusters",
      await file("c.yaml", CLUSTERS),
      "--strategy",
      strategy,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`deep.json:1:`);
    expect(result.stderr).toContain(
      `is nested more than ${String(MAX_NESTING_DEPTH)} levels deep`,
    );
    expect(result.stderr).not.toContain("call stack");
  });

  it("names the path of a value nested 200 levels deep", async () => {
    const deep = `${"{a: ".repeat(200)}1${"}".repeat(200)}`;
    const result = await flotilla([
      "plan",
      "--clusters",
      await file("c200.yaml", `- {name: c-01, labels: ${deep}}\n`),
      "--strategy",
      await file("s.json", JSON.stringify({ stages: [stage("a")] })),
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `c200\\.yaml: \\[0\\]\\.labels(\\.a)+.*: is nested more than ${String(MAX_NESTING_DEPTH)} levels deep`,
      ),
    );
  });

  it(`refuses a strategy with more than ${String(MAX_STAGES)} stages`, async () => {
    const strategy = await file(
      "long.json",
      JSON.stringify({
        stages: Array.from({ length: 10_000 }, (_, i) =>
          stage(`s${String(i)}`),
        ),
      }),
    );
    const result = await flotilla([
      "plan",
      "--clusters",
      await file("c.yaml", CLUSTERS),
      "--strategy",
      strategy,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `long.json: stages: must have at most ${String(MAX_STAGES)} stages`,
    );
  });

  it("refuses a __proto__ key in a clusters file, naming its path", async () => {
    const result = await flotilla([
      "plan",
      "--clusters",
      await file(
        "proto.yaml",
        '- {name: c-01, "__proto__": {labels: {env: prod}}}\n',
      ),
      "--strategy",
      await file("s.json", JSON.stringify({ stages: [stage("a")] })),
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "proto.yaml: [0].__proto__: is not allowed",
    );
  });

  it(`refuses a cluster with more than ${String(MAX_LABELS)} labels`, async () => {
    const labels = Array.from(
      { length: 1_000 },
      (_, i) => `k${String(i)}: v`,
    ).join(", ");
    const result = await flotilla([
      "plan",
      "--clusters",
      await file("many.yaml", `- {name: c-01, labels: {${labels}}}\n`),
      "--strategy",
      await file("s.json", JSON.stringify({ stages: [stage("a")] })),
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `[0].labels: must have at most ${String(MAX_LABELS)} labels`,
    );
  });

  it("simulates a cluster named constructor like any other", async () => {
    const result = await flotilla([
      "simulate",
      "--clusters",
      await file(
        "ctor.yaml",
        "- {name: constructor, labels: {env: prod}}\n- {name: c-01, labels: {env: prod}}\n",
      ),
      "--strategy",
      await file("s.json", JSON.stringify({ stages: [stage("a")] })),
      "--scenario",
      await file(
        "sc.yaml",
        'start: "2026-03-02T09:00:00Z"\nkind: update\nclusters:\n  c-01: {readyAfterSeconds: 30}\n',
      ),
      "-o",
      "json",
    ]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"constructor"');
  });
});
