/**
 * What every admin command shares: choosing the hub and its transport (flags over environment,
 * never silently plaintext), the actor header, the exit codes 1/2/3, field problems from the hub,
 * the noun/verb help, and the built binary run as a subprocess.
 */
import { FlotillaError } from "@flotilla/core";
import { describe, expect, it } from "vitest";
import { runBuiltCli } from "./built-cli.js";
import { cliAgainst, closedPort, startFakeHub } from "./fake-hub.js";
import { memoryIo } from "./fixtures.js";
import { runCli } from "./support/run-cli.js";

const NO_CLUSTERS = {
  ListClusters: () => ({ clusters: [], nextPageToken: "" }),
};

const cli = (argv: string[], env: Record<string, string> = {}) =>
  runCli(argv, memoryIo({}, { env }));

describe("choosing the hub", () => {
  it("refuses to connect without TLS files or --insecure-plaintext, exit 2", async () => {
    await using hub = await startFakeHub({ unary: NO_CLUSTERS });
    const { code, out, err } = await cli([
      "cluster",
      "list",
      "--hub",
      hub.address,
    ]);
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toContain(
      "flotilla: no transport security chosen: give --tls-ca FILE",
    );
    expect(err).toContain("--insecure-plaintext");
    expect(hub.calls).toEqual([]);
  });

  it("refuses TLS files together with --insecure-plaintext, and unreadable TLS files", async () => {
    const both = await cli([
      "cluster",
      "list",
      "--insecure-plaintext",
      "--tls-ca",
      "ca.pem",
    ]);
    expect(both.code).toBe(2);
    expect(both.err).toContain(
      "flotilla: flags: choose TLS files or plaintext, not both",
    );
    const missing = await cli(["cluster", "list", "--tls-ca", "ca.pem"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toBe(
      "flotilla: --tls-ca ca.pem: cannot read: no such file\n",
    );
  });

  it("reads the address, plaintext choice and actor from the environment", async () => {
    await using hub = await startFakeHub({ unary: NO_CLUSTERS });
    const { code, out } = await cli(["cluster", "list"], {
      FLOTILLA_HUB: hub.address,
      FLOTILLA_INSECURE_PLAINTEXT: "1",
      FLOTILLA_ACTOR: "ci-bot",
    });
    expect(code).toBe(0);
    expect(out).toBe("No clusters.\n");
    expect(hub.calls.map((c) => c.actor)).toEqual(["ci-bot"]);
  });

  it("lets flags win over the environment, and defaults the actor to the OS user", async () => {
    await using hub = await startFakeHub({ unary: NO_CLUSTERS });
    const port = await closedPort();
    const { code } = await cli(
      ["cluster", "list", "--hub", hub.address, "--insecure-plaintext"],
      { FLOTILLA_HUB: `127.0.0.1:${String(port)}` },
    );
    expect(code).toBe(0);
    expect(hub.calls.map((c) => c.actor)).toEqual(["tester"]);
  });

  it.each([
    [["--hub", "localhost"], 'hub address must be HOST:PORT (got "localhost")'],
    [
      ["--actor", "bob smith"],
      'actor must be 1 to 128 letters, digits or . _ @ : / - (got "bob smith")',
    ],
    [
      ["--timeout", "10"],
      '--timeout needs a unit, e.g. "10s" or "10m" (got "10")',
    ],
  ])("refuses %j with exit 2", async (flags, message) => {
    const { code, err } = await cli([
      "cluster",
      "list",
      "--insecure-plaintext",
      ...flags,
    ]);
    expect(code).toBe(2);
    expect(err).toContain(`flotilla: ${message}\n`);
  });
});

describe("exit codes", () => {
  it("exits 3 naming the address and --hub when nothing listens there", async () => {
    const address = `127.0.0.1:${String(await closedPort())}`;
    const { code, out, err } = await cliAgainst({ address }, [
      "cluster",
      "list",
    ]);
    expect(code).toBe(3);
    expect(out).toBe("");
    expect(err).toMatch(
      new RegExp(`^flotilla: cannot reach the hub at ${address}: `),
    );
    expect(err).toContain(
      "Point at it with --hub HOST:PORT (or FLOTILLA_HUB).",
    );
  });

  it("exits 2 and prints each field problem of the hub's INVALID_ARGUMENT as PATH: MESSAGE (got VALUE)", async () => {
    await using hub = await startFakeHub({
      unary: {
        CreateClusterGroup: () => {
          throw FlotillaError.invalid("cluster group", [
            {
              path: "group.name",
              message: "must be a DNS label",
              value: "Prod_EU",
            },
            {
              path: "group.labels.tier",
              message: "label value must be a string",
            },
          ]);
        },
      },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "group",
      "create",
      "Prod_EU",
      "--selector",
      "env=prod",
    ]);
    expect(code).toBe(2);
    expect(out).toBe("");
    const lines = err.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^flotilla: /);
    expect(lines.slice(1)).toEqual([
      '  group.name: must be a DNS label (got "Prod_EU")',
      "  group.labels.tier: label value must be a string",
    ]);
  });

  it.each([
    ["already_exists", 'Cluster group "prod" already exists'],
    [
      "failed_precondition",
      'Cluster group "prod" changed: revision 4, expected 3',
    ],
    ["permission_denied", "viewer may not create cluster groups"],
    ["internal", "Internal error"],
  ] as const)("exits 1 when the hub answers %s", async (code, message) => {
    await using hub = await startFakeHub({
      unary: {
        CreateClusterGroup: () => {
          throw new FlotillaError(code, message);
        },
      },
    });
    const result = await cliAgainst(hub, [
      "group",
      "create",
      "prod",
      "--selector",
      "",
    ]);
    expect(result.code).toBe(1);
    expect(result.err).toBe(`flotilla: ${message}\n`);
  });

  it("exits 1 when a connected hub does not answer within --timeout", async () => {
    await using hub = await startFakeHub({
      // Never answers: the client's deadline ends the call.
      unary: { ListClusters: () => new Promise<never>(() => undefined) },
    });
    const { code, err } = await cliAgainst(hub, [
      "cluster",
      "list",
      "--timeout",
      "300ms",
    ]);
    expect(code).toBe(1);
    expect(err).toContain("did not answer within");
  });
});

describe("nouns, verbs and help", () => {
  it("lists the nouns in flotilla help and the verbs in flotilla NOUN --help", async () => {
    const main = await cli(["help"]);
    expect(main.out).toMatch(/^ {2}preview +\S/m);
    for (const noun of [
      "cluster",
      "group",
      "strategy",
      "bundle",
      "run",
      "audit",
      "token",
      "admin-cert",
      "config",
    ])
      expect(main.out).toMatch(new RegExp(`^ {2}${noun} +\\S`, "m"));
    const run = await cli(["run", "--help"]);
    expect(run.code).toBe(0);
    for (const verb of [
      "create",
      "start",
      "stop",
      "skip",
      "retry",
      "approve",
      "complete-gate",
      "list",
      "status",
    ])
      expect(run.out).toMatch(new RegExp(`^ {2}${verb} +\\S`, "m"));
    expect(await cli(["help", "run"])).toEqual(run);
  });

  it("shows a verb's arguments and the hub options apart", async () => {
    const { code, out } = await cli(["help", "cluster", "label"]);
    expect(code).toBe(0);
    expect(out).toContain(
      "Usage: flotilla cluster label NAME [LABEL…] [--update-group GROUP] [--expected-revision N] [--reason TEXT] [-o table|json] [hub options]",
    );
    expect(out).toContain("Hub connection (flags win over the environment):");
    expect(out).toMatch(/--insecure-plaintext +talk to the hub without TLS/);
  });

  it.each([
    [["cluster"], "cluster: no verb given"],
    [["cluster", "frobnicate"], 'unknown verb "frobnicate" for "cluster"'],
    [["cluster", "get"], "cluster get: missing argument NAME"],
    [["cluster", "get", "a", "b"], 'cluster get: unexpected argument "b"'],
  ])("flotilla %j exits 2 with a usage message", async (argv, message) => {
    const { code, err } = await cli(argv);
    expect(code).toBe(2);
    expect(err).toContain(`flotilla: ${message}\n`);
  });
});

describe("the built binary", () => {
  const flotilla = (args: string[]) => runBuiltCli(args);

  it("lists clusters from a hub over gRPC and exits 0", async () => {
    await using hub = await startFakeHub({
      unary: {
        ListClusters: () => ({
          clusters: [
            { name: "c-1", connection: "CONNECTION_STATE_NEVER_CONNECTED" },
          ],
          nextPageToken: "",
        }),
      },
    });
    const result = await flotilla([
      "cluster",
      "list",
      "--hub",
      hub.address,
      "--insecure-plaintext",
      "--actor",
      "proc",
    ]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^c-1 +NeverConnected +- +0\/0 +never +<none>$/m,
    );
    expect(hub.calls.map((c) => c.actor)).toEqual(["proc"]);
  });

  it("exits 3 when the hub is unreachable", async () => {
    const port = await closedPort();
    const result = await flotilla([
      "run",
      "list",
      "--hub",
      `127.0.0.1:${String(port)}`,
      "--insecure-plaintext",
    ]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(
      `cannot reach the hub at 127.0.0.1:${String(port)}`,
    );
  });
});
