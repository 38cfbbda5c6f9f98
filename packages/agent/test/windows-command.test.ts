import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createConfigMapMaintenanceSource,
  runWindowsCommand,
} from "@flotilla/agent";
import { MAX_NESTING_DEPTH } from "@flotilla/core/testing";
import { waitFor, type KubeApiServer } from "@flotilla/testkit";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { main } from "../src/main.js";
import { kubeServer } from "./support/kube-upgrade-fixtures.js";

// Thursday 2026-12-03 12:00 UTC.
const NOW = Date.UTC(2026, 11, 3, 12, 0);

const WEEKLY = `# Saturday nights only (owner's comment)
maintenance:
  kubernetes:
    - schedule: { weekly: { dayOfWeek: Saturday } }
      startTime: "22:00"
      durationHours: 4
`;

async function setup() {
  const { server, kubeConfig } = await kubeServer(["flotilla"], []);
  const dir = await mkdtemp(join(tmpdir(), "windows-command-"));
  const kubeconfig = join(dir, "kubeconfig");
  await writeFile(kubeconfig, server.kubeconfig({ namespace: "flotilla" }));
  const run = async (...argv: string[]) => {
    let stdout = "";
    let stderr = "";
    const code = await runWindowsCommand(
      [...argv, "--kubeconfig", kubeconfig],
      {},
      {
        stdout: (t) => (stdout += t),
        stderr: (t) => (stderr += t),
        signal: new AbortController().signal,
        now: () => NOW,
      },
    );
    return { code, stdout, stderr };
  };
  return {
    server,
    kubeConfig,
    dir,
    kubeconfig,
    run,
    [Symbol.asyncDispose]: async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const stored = (server: KubeApiServer) =>
  (
    server.object("ConfigMap", "flotilla", "flotilla-agent-windows")?.data as
      Record<string, string> | undefined
  )?.["windows.yaml"];

const patches = (server: KubeApiServer) =>
  server.requests().filter((r) => r.verb === "patch").length;

describe("flotilla-agent windows", () => {
  it("set writes the file into the ConfigMap and prints the next openings per scope", async () => {
    await using t = await setup();
    const file = join(t.dir, "windows.yaml");
    await writeFile(file, WEEKLY);
    const { code, stdout } = await t.run("set", file);
    expect(code).toBe(0);
    expect(stored(t.server)).toBe(WEEKLY);
    expect(stdout).toBe(
      [
        'Updated ConfigMap "flotilla/flotilla-agent-windows" key windows.yaml.',
        "kubernetes  closed, opens 2026-12-05T22:00Z",
        "            Weekly Saturday 22:00 +00:00 for 4h",
        "nodeImage   open any time",
        "            any time",
        "workloads   open any time",
        "            any time",
        "",
      ].join("\n"),
    );
  });

  it("set refuses a file core's schema rejects, naming the field, and writes nothing", async () => {
    await using t = await setup();
    const file = join(t.dir, "windows.yaml");
    await writeFile(
      file,
      WEEKLY.replace("durationHours: 4", "durationHours: 0"),
    );
    const { code, stderr } = await t.run("set", file);
    expect(code).toBe(2);
    expect(stderr).toContain("maintenance.kubernetes[0].durationHours");
    expect(stderr).toContain("nothing was written");
    expect(patches(t.server)).toBe(0);
  });

  it("set refuses a file nested too deeply or with a __proto__ key, and writes nothing", async () => {
    await using t = await setup();
    const deep = join(t.dir, "deep.yaml");
    await writeFile(
      deep,
      `maintenance: ${"[".repeat(10_000)}${"]".repeat(10_000)}\n`,
    );
    const tooDeep = await t.run("set", deep);
    expect(tooDeep.code).toBe(2);
    expect(tooDeep.stderr).toContain(
      `is nested more than ${String(MAX_NESTING_DEPTH)} levels deep`,
    );
    expect(tooDeep.stderr).toContain("nothing was written");
    const proto = join(t.dir, "proto.yaml");
    await writeFile(
      proto,
      WEEKLY.replace("  kubernetes:", '  "__proto__": {x: 1}\n  kubernetes:'),
    );
    const refused = await t.run("set", proto);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("maintenance.__proto__: is not allowed");
    expect(refused.stderr).toContain("nothing was written");
    expect(patches(t.server)).toBe(0);
  });

  it("freeze adds a freeze, keeps the owner's comments, and the agent's source sees it at once", async () => {
    await using t = await setup();
    const file = join(t.dir, "windows.yaml");
    await writeFile(file, WEEKLY);
    await t.run("set", file);
    await using source = createConfigMapMaintenanceSource(
      { kubeConfig: t.kubeConfig, logger: pino({ level: "silent" }) },
      { namespace: "flotilla", name: "flotilla-agent-windows" },
    );
    await source.start();
    const { code, stdout } = await t.run(
      "freeze",
      "--scope",
      "kubernetes",
      "--until",
      "2026-12-24",
      "--reason",
      "holidays",
    );
    expect(code).toBe(0);
    expect(stored(t.server)).toContain(
      "# Saturday nights only (owner's comment)",
    );
    expect(stdout).toContain("kubernetes  closed, opens 2026-12-26T22:00Z");
    expect(stdout).toContain(
      "frozen 2026-12-03T12:00Z–2026-12-25T00:00Z (holidays)",
    );
    expect(stdout).toContain("nodeImage   open any time");
    const freezes = await waitFor(
      () =>
        source.current().maintenance?.freezes.length === 1 &&
        source.current().maintenance?.freezes,
    );
    expect(freezes[0]).toEqual({
      startMs: NOW,
      endMs: Date.UTC(2026, 11, 25),
      scopes: ["kubernetes"],
      reason: "holidays",
    });
  });

  it("freeze refuses unknown scopes and bad dates before writing", async () => {
    await using t = await setup();
    const scope = await t.run(
      "freeze",
      "--scope",
      "kubernetes,nodes",
      "--until",
      "2026-12-24",
    );
    expect(scope.code).toBe(2);
    expect(scope.stderr).toContain(
      '--scope: "nodes" is not a scope (scopes: kubernetes, nodeImage, workloads)',
    );
    const until = await t.run("freeze", "--until", "next tuesday");
    expect(until.code).toBe(2);
    expect(until.stderr).toMatch(
      /maintenance\.freezes\[0\]\.end: .*"next tuesday"/,
    );
    expect((await t.run("freeze")).stderr).toContain("freeze needs --until T");
    expect(patches(t.server)).toBe(0);
  });

  it("clear --freezes drops only the freezes; clear allows any time", async () => {
    await using t = await setup();
    const file = join(t.dir, "windows.yaml");
    await writeFile(file, WEEKLY);
    await t.run("set", file);
    await t.run("freeze", "--until", "2026-12-24");
    expect(stored(t.server)).toContain("freezes:");
    expect((await t.run("clear", "--freezes")).code).toBe(0);
    expect(stored(t.server)).not.toContain("freezes");
    expect(stored(t.server)).toContain('startTime: "22:00"');
    const { stdout } = await t.run("clear");
    expect(stored(t.server)).toContain("maintenance: null");
    expect(stdout).toContain("kubernetes  open any time");
  });

  it("show reports a missing ConfigMap as any time and invalid content as an error", async () => {
    await using t = await setup();
    const missing = await t.run("show");
    expect(missing.code).toBe(0);
    expect(missing.stdout).toContain(
      'ConfigMap "flotilla/flotilla-agent-windows" does not exist: no windows, any time is allowed.',
    );
    t.server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "flotilla-agent-windows", namespace: "flotilla" },
      data: { "windows.yaml": "maintenance: {kubernetes: [{startTime: x}]}" },
    });
    const invalid = await t.run("show");
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(
      "is invalid (the agent keeps its last valid windows)",
    );
    expect(invalid.stderr).toContain("maintenance.kubernetes[0]");
  });

  it("is reached through flotilla-agent's first argument, with KUBECONFIG and FLOTILLA_WINDOWS_CONFIGMAP", async () => {
    await using t = await setup();
    let stdout = "";
    const code = await main(
      ["windows", "freeze", "--until", "2999-01-01", "--scope", "workloads"],
      { KUBECONFIG: t.kubeconfig, FLOTILLA_WINDOWS_CONFIGMAP: "owner-windows" },
      {
        stdout: (text) => (stdout += text),
        stderr: () => undefined,
        signal: new AbortController().signal,
      },
    );
    expect(code).toBe(0);
    expect(stdout).toContain("workloads   closed, no opening in sight");
    expect(
      t.server.object("ConfigMap", "flotilla", "owner-windows"),
    ).toBeDefined();
  });
});
