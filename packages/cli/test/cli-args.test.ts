import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { VERSION } from "../src/version.js";
import { runCli } from "./support/run-cli.js";

const cli = (argv: string[]) => runCli(argv);

describe("flotilla argument errors", () => {
  it.each([
    [[], "no command given"],
    [["deploy"], 'unknown command "deploy"'],
    [["--frobnicate"], 'unknown option "--frobnicate"'],
    [
      ["plan", "--strategy", "s.json"],
      "plan: missing required option --clusters",
    ],
    [
      ["plan", "--clusters", "c.yaml"],
      "plan: missing required option --strategy",
    ],
    [
      ["plan", "--clusters", "c.yaml", "--strategy", "s.json", "--colour"],
      'plan: unknown option "--colour"',
    ],
    [
      ["plan", "--clusters", "c.yaml", "--strategy", "s.json", "-o", "yaml"],
      'plan: option "-o" must be one of table, json (got "yaml")',
    ],
    [
      ["plan", "--clusters", "c.yaml", "--strategy", "s.json", "extra"],
      'plan: unexpected argument "extra"',
    ],
    [
      ["plan", "--clusters", "--strategy", "s.json"],
      'plan: option "--clusters" needs a value (FILE)',
    ],
    [
      ["plan", "--clusters", "c.yaml", "--strategy", "s.json", "--all=yes"],
      'plan: option "--all" does not take a value',
    ],
    [
      ["simulate", "--clusters", "c.yaml", "--strategy", "s.json"],
      "simulate: missing required option --scenario",
    ],
    [["help", "deploy"], 'unknown command "deploy"'],
  ])(
    "flotilla %j exits 2 with a usage message on stderr",
    async (argv, message) => {
      const { code, out, err } = await cli(argv);
      expect(code).toBe(2);
      expect(out).toBe("");
      expect(err).toContain(`flotilla: ${message}\n`);
      expect(err).toContain("Usage: flotilla");
    },
  );

  it("reports every argument problem at once", async () => {
    const { err } = await cli(["simulate", "--bogus"]);
    expect(err).toContain('unknown option "--bogus"');
    expect(err).toContain("missing required option --clusters");
    expect(err).toContain("missing required option --strategy");
    expect(err).toContain("missing required option --scenario");
  });

  it("accepts --name=value and -o json forms", async () => {
    const { err } = await cli([
      "plan",
      "--clusters=c.yaml",
      "--strategy=s.json",
      "-ojson",
    ]);
    // Past argument parsing: the (missing) files are what fails now.
    expect(err).toContain("c.yaml: cannot read: no such file");
  });
});

describe("flotilla help and version", () => {
  it("prints the command list for --help, -h and help, on stdout with exit 0", async () => {
    for (const argv of [["--help"], ["-h"], ["help"]]) {
      const { code, out, err } = await cli(argv);
      expect(code).toBe(0);
      expect(err).toBe("");
      expect(out).toMatch(/^ {2}plan +\S/m);
      expect(out).toMatch(/^ {2}simulate +\S/m);
    }
  });

  it("prints a command's options for `help plan` and `plan --help`", async () => {
    const viaHelp = await cli(["help", "plan"]);
    const viaFlag = await cli(["plan", "--help"]);
    expect(viaHelp.code).toBe(0);
    expect(viaFlag).toEqual(viaHelp);
    expect(viaHelp.out).toContain(
      "Usage: flotilla plan --clusters FILE [--strategy FILE] [--cluster-groups FILE] [-o table|json] [--all] [--channel CHANNEL] [--target-kubernetes-version MAJOR.MINOR] [--long-term-support] [--node-image-selection Latest|Consistent] [--catalogue FILE]",
    );
    expect(viaHelp.out).toMatch(
      /--clusters FILE +clusters file .*\(required\)/,
    );
  });

  it("documents simulate's scenario and --no-timeline options", async () => {
    const { out } = await cli(["help", "simulate"]);
    expect(out).toContain("--scenario FILE");
    expect(out).toContain("--no-timeline");
  });

  it("prints the version from package.json", async () => {
    const pkg = JSON.parse(
      readFileSync(new URL("../package.json", import.meta.url), "utf8"),
    ) as { version: string };
    expect(VERSION).toBe(pkg.version);
    expect(await cli(["--version"])).toEqual({
      code: 0,
      out: `flotilla ${pkg.version}\n`,
      err: "",
    });
  });
});
