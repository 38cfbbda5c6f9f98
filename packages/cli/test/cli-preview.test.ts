/**
 * plan and simulate through `run`, with the real engine on small in-memory files.
 * These need @flotilla/core's plan/simulate.
 */
import { describe, expect, it } from "vitest";
import { memoryIo, type MemoryIo } from "./fixtures.js";
import { runCli } from "./support/run-cli.js";

const CLUSTERS = `
- {name: c-01, labels: {env: canary}}
- {name: c-02, labels: {env: canary}}
- {name: p-01, labels: {env: prod}}
- {name: p-02, labels: {env: prod}}
- {name: p-03, labels: {env: prod}}
`;

const STRATEGY = JSON.stringify({
  stages: [
    {
      name: "canary",
      groups: [{ name: "canary", memberSelector: { byLabel: "env=canary" } }],
    },
    {
      name: "prod",
      groups: [
        {
          name: "prod",
          memberSelector: { byLabel: "env=prod" },
          maxConcurrency: 2,
        },
      ],
    },
  ],
});

const SCENARIO = `
start: "2026-03-02T09:00:00Z"
kind: update
defaults: {readyAfterSeconds: 600}
`;

const FILES = { "c.yaml": CLUSTERS, "s.json": STRATEGY, "sc.yaml": SCENARIO };
const PLAN = ["plan", "--clusters", "c.yaml", "--strategy", "s.json"];
const SIMULATE = [
  "simulate",
  "--clusters",
  "c.yaml",
  "--strategy",
  "s.json",
  "--scenario",
  "sc.yaml",
];

const cli = (argv: string[], io: MemoryIo = memoryIo(FILES)) =>
  runCli(argv, io);

describe("flotilla plan", () => {
  it("prints the plan tree for people by default", async () => {
    const { code, out, err } = await cli(PLAN);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toMatch(
      /^Plan: staged update run, 2 stages, 2 groups, 5 clusters\n/,
    );
    expect(out).toContain("├─ stage canary");
    expect(out).toContain("   └─ group prod  3 clusters · maxConcurrency 2");
    expect(out).toContain("p-01, p-02, p-03");
  });

  it("prints exactly core's object as indented JSON with -o json", async () => {
    const { code, out, err } = await cli([...PLAN, "-o", "json"]);
    expect(code).toBe(0);
    expect(err).toBe("");
    const parsed = JSON.parse(out) as {
      apiVersion: string;
      dialect: string;
      waves: { name: string }[];
    };
    expect(out).toBe(`${JSON.stringify(parsed, null, 2)}\n`);
    expect(parsed.apiVersion).toBe("flotilla.dev/v1");
    expect(parsed.dialect).toBe("staged");
    expect(parsed.waves.map((w) => w.name)).toEqual(["canary", "prod"]);
  });

  it("prints one line per input problem naming the file it is in, exit 2, nothing on stdout", async () => {
    const io = memoryIo({
      "c.yaml":
        "- {name: c-01, lables: {env: canary}}\n- {name: c-02, region: 7}\n",
      "s.json": JSON.stringify({
        stages: [{ name: "canary", maxConcurency: 2 }],
      }),
    });
    const { code, out, err } = await cli(PLAN, io);
    expect(code).toBe(2);
    expect(out).toBe("");
    const lines = err.trimEnd().split("\n");
    expect(lines).toContain(
      'c.yaml: [0].lables: unknown field; did you mean "labels"?',
    );
    expect(
      lines.some(
        (l) => l.startsWith("c.yaml: [1].region: ") && l.endsWith("(got 7)"),
      ),
    ).toBe(true);
    expect(
      lines.some((l) =>
        l.startsWith("s.json: stages[0].maxConcurency: unknown field"),
      ),
    ).toBe(true);
    expect(lines.every((l) => /^(c\.yaml|s\.json): /.test(l))).toBe(true);
  });

  it("reports malformed YAML as FILE:LINE:COL with exit 2 and nothing on stdout", async () => {
    const io = memoryIo({
      ...FILES,
      "c.yaml": "- name: c-01\n  labels: {env: canary\n",
    });
    const { code, out, err } = await cli(PLAN, io);
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toMatch(/^c\.yaml:\d+:\d+: /);
  });

  it("reports a missing file as FILE: cannot read, exit 2", async () => {
    const { code, out, err } = await cli([
      "plan",
      "--clusters",
      "nope.yaml",
      "--strategy",
      "s.json",
    ]);
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toBe("nope.yaml: cannot read: no such file\n");
  });

  it("colours only on a terminal without NO_COLOR", async () => {
    const tty = await cli(PLAN, memoryIo(FILES, { isTTY: true, columns: 100 }));
    const noColor = await cli(
      PLAN,
      memoryIo(FILES, { isTTY: true, env: { NO_COLOR: "1" } }),
    );
    const piped = await cli(PLAN);
    expect(tty.out).toContain("\u001b[");
    expect(noColor.out).not.toContain("\u001b[");
    expect(piped.out).not.toContain("\u001b[");
  });
});

describe("flotilla simulate", () => {
  it("prints the timeline, progress, final state and total duration", async () => {
    const { code, out, err } = await cli(SIMULATE);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain("Timeline:");
    // The canary group takes one member at a time (group maxConcurrency defaults to 1).
    expect(out).toMatch(/\n {2}\+0m +started +canary +c-01\n/);
    expect(out).toMatch(/\n {2}\+\d+m +started +prod +p-01, p-02\n/);
    expect(out).toMatch(/stage prod +Completed +\[█{20}\] 3\/3 Succeeded/);
    expect(out).toContain("Final state: Completed · 0 failures");
    expect(out).toMatch(/Total: \d+m \(simulated\)/);
  });

  it("hides the timeline with --no-timeline", async () => {
    const { out } = await cli([...SIMULATE, "--no-timeline"]);
    expect(out).not.toContain("Timeline:");
    expect(out).toContain("Final state:");
  });

  it("prints parseable JSON only with -o json", async () => {
    const { code, out } = await cli([...SIMULATE, "-o", "json"]);
    expect(code).toBe(0);
    const parsed = JSON.parse(out) as {
      apiVersion: string;
      finalState: string;
      timeline: unknown[];
    };
    expect(out).toBe(`${JSON.stringify(parsed, null, 2)}\n`);
    expect(parsed.apiVersion).toBe("flotilla.dev/v1");
    expect(parsed.finalState).toBe("Completed");
    expect(parsed.timeline.length).toBeGreaterThan(0);
  });

  it("names the scenario file for scenario problems", async () => {
    const io = memoryIo({
      ...FILES,
      "sc.yaml": 'start: "2026-03-02T09:00:00Z"\nkind: deploy\n',
    });
    const { code, out, err } = await cli(SIMULATE, io);
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toMatch(/^sc\.yaml: kind: /);
  });
});
