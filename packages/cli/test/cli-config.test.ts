/**
 * The config file and its contexts: validation naming the file and the field, precedence (flags >
 * environment > the chosen context), the bearer token sent from a context, and the config
 * commands (set-context writes 0600 and keeps the other contexts, use-context, get-contexts,
 * view redacts tokens).
 */
import { formatProblem } from "@flotilla/core";
import { describe, expect, it } from "vitest";
import { parseCliConfig } from "../src/hub/cli-config.js";
import { closedPort, startFakeHub } from "./fake-hub.js";
import { memoryIo, type MemoryIo } from "./fixtures.js";
import { runCli } from "./support/run-cli.js";

const CONFIG = "/home/tester/.config/flotilla/config.yaml";
const NO_CLUSTERS = {
  ListClusters: () => ({ clusters: [], nextPageToken: "" }),
};

function io(
  files: Record<string, string> = {},
  env: Record<string, string> = {},
) {
  return memoryIo(files, { env: { HOME: "/home/tester", ...env } });
}

const cli = (argv: string[], memory: MemoryIo) => runCli(argv, memory);

describe("parseCliConfig", () => {
  it("names the file, each bad field's path and its value", () => {
    const parsed = parseCliConfig(
      [
        "currentContext: prod",
        "contexts:",
        "  - name: prod",
        "    certFile: /c.pem",
        "    insecurePlaintext: yes-please",
        "  - name: dev",
        "    hub: 127.0.0.1:7070",
        "    colour: blue",
        "  - name: dev",
        "    hub: 127.0.0.1:7071",
        "    token: abc",
        "    tokenFile: /t",
      ].join("\n"),
      "/cfg.yaml",
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map(formatProblem)).toEqual([
      "/cfg.yaml: contexts[0].hub: is required (HOST:PORT)",
      '/cfg.yaml: contexts[0].insecurePlaintext: must be true or false (got "yes-please")',
      "/cfg.yaml: contexts[0]: certFile and keyFile go together",
      "/cfg.yaml: contexts[1].colour: unknown field",
      "/cfg.yaml: contexts[2]: give token or tokenFile, not both",
    ]);
  });

  it("refuses a current context that names no context, and text that is not YAML", () => {
    const missing = parseCliConfig(
      "currentContext: nope\ncontexts: []\n",
      "/cfg.yaml",
    );
    expect(missing).toEqual({
      ok: false,
      problems: [
        {
          path: "/cfg.yaml",
          message: 'currentContext: names no context (got "nope")',
        },
      ],
    });
    const broken = parseCliConfig("contexts: [\n", "/cfg.yaml");
    expect(broken.ok).toBe(false);
    if (!broken.ok)
      expect(formatProblem(broken.problems[0]!)).toMatch(
        /^\/cfg.yaml: not valid YAML: /,
      );
  });
});

describe("hub commands with contexts", () => {
  it("uses the current context's hub, transport and token file", async () => {
    await using hub = await startFakeHub({ unary: NO_CLUSTERS });
    const memory = io({
      [CONFIG]: `currentContext: dev\ncontexts:\n  - name: dev\n    hub: ${hub.address}\n    insecurePlaintext: true\n    tokenFile: /secrets/dev\n`,
      "/secrets/dev": "dev-token-0123456789\n",
    });
    const { code, out } = await cli(["cluster", "list"], memory);
    expect(code).toBe(0);
    expect(out).toBe("No clusters.\n");
    expect(hub.calls.map((c) => c.authorization)).toEqual([
      "Bearer dev-token-0123456789",
    ]);
  });

  it("lets --context pick another context, and FLOTILLA_CONFIG point at another file", async () => {
    await using hub = await startFakeHub({ unary: NO_CLUSTERS });
    const dead = `127.0.0.1:${String(await closedPort())}`;
    const memory = io(
      {
        "/etc/flotilla.yaml": [
          "currentContext: broken",
          "contexts:",
          `  - {name: broken, hub: "${dead}", insecurePlaintext: true}`,
          `  - {name: good, hub: "${hub.address}", insecurePlaintext: true, token: ctx-token-0123456789}`,
        ].join("\n"),
      },
      { FLOTILLA_CONFIG: "/etc/flotilla.yaml" },
    );
    const { code } = await cli(
      ["cluster", "list", "--context", "good"],
      memory,
    );
    expect(code).toBe(0);
    expect(hub.calls[0]?.authorization).toBe("Bearer ctx-token-0123456789");
  });

  it("lets flags win over the environment, and the environment over the context", async () => {
    await using hub = await startFakeHub({ unary: NO_CLUSTERS });
    const dead = `127.0.0.1:${String(await closedPort())}`;
    const config = {
      [CONFIG]: `currentContext: c\ncontexts:\n  - {name: c, hub: "${dead}", insecurePlaintext: true, token: ctx-token-0123456789}\n`,
      "/flag-token": "flag-token-0123456789",
    };
    const fromEnv = await cli(
      ["cluster", "list"],
      io(config, {
        FLOTILLA_HUB: hub.address,
        FLOTILLA_TOKEN: "env-token-0123456789",
      }),
    );
    expect(fromEnv.code).toBe(0);
    const fromFlags = await cli(
      ["cluster", "list", "--hub", hub.address, "--token-file", "/flag-token"],
      io(config, {
        FLOTILLA_HUB: dead,
        FLOTILLA_TOKEN: "env-token-0123456789",
      }),
    );
    expect(fromFlags.code).toBe(0);
    expect(hub.calls.map((c) => c.authorization)).toEqual([
      "Bearer env-token-0123456789",
      "Bearer flag-token-0123456789",
    ]);
  });

  it("exits 2 for an unknown context, a bad config file and a malformed token, without printing the token", async () => {
    const unknown = await cli(
      ["cluster", "list", "--context", "nope"],
      io({
        [CONFIG]:
          'contexts:\n  - {name: a, hub: "h:1", insecurePlaintext: true}\n',
      }),
    );
    expect(unknown.code).toBe(2);
    expect(unknown.err).toBe(
      `flotilla: context "nope" is not in ${CONFIG} (contexts: a)\n`,
    );
    const bad = await cli(
      ["cluster", "list"],
      io({ [CONFIG]: "contexts:\n  - {name: a, hub: 7}\n" }),
    );
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(
      `flotilla: ${CONFIG}: contexts[0].hub: must be a non-empty string (got 7)\n`,
    );
    const token = await cli(
      ["cluster", "list", "--insecure-plaintext", "--token-file", "/t"],
      io({ "/t": "has spaces in it secret" }),
    );
    expect(token.code).toBe(2);
    expect(token.err).toBe(
      "flotilla: --token-file /t: the bearer token must be 1 to 4096 of A-Z, a-z, 0-9, . _ ~ + / = -\n",
    );
  });
});

describe("config commands", () => {
  it("set-context creates the file 0600 with absolute paths, makes the first context current and keeps others", async () => {
    const memory = io();
    const first = await cli(
      [
        "config",
        "set-context",
        "prod",
        "--hub",
        "hub.example.com:7070",
        "--ca",
        "/pki/ca.pem",
        "--cert",
        "/pki/cert.pem",
        "--key",
        "/pki/key.pem",
      ],
      memory,
    );
    expect(first).toEqual({
      code: 0,
      out: `Context "prod" created in ${CONFIG}.\n`,
      err: "",
    });
    expect(memory.modes[CONFIG]).toBe(0o600);
    const second = await cli(
      [
        "config",
        "set-context",
        "dev",
        "--hub",
        "127.0.0.1:7070",
        "--insecure-plaintext",
        "--token-file",
        "relative/token",
      ],
      memory,
    );
    expect(second.code).toBe(0);
    const parsed = parseCliConfig(memory.files[CONFIG] ?? "", CONFIG);
    expect(parsed).toEqual({
      ok: true,
      value: {
        currentContext: "prod",
        contexts: [
          {
            name: "prod",
            hub: "hub.example.com:7070",
            caFile: "/pki/ca.pem",
            certFile: "/pki/cert.pem",
            keyFile: "/pki/key.pem",
          },
          {
            name: "dev",
            hub: "127.0.0.1:7070",
            insecurePlaintext: true,
            tokenFile: `${process.cwd()}/relative/token`,
          },
        ],
      },
    });
  });

  it("set-context refuses a new context without --hub, a bad address and a lone --cert", async () => {
    const memory = io();
    expect((await cli(["config", "set-context", "x"], memory)).err).toBe(
      'flotilla: config set-context: context "x" is new: give --hub HOST:PORT\n',
    );
    const bad = await cli(
      ["config", "set-context", "x", "--hub", "nohost", "--cert", "/c"],
      io(),
    );
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(
      'flotilla: config set-context: hub address must be HOST:PORT (got "nohost")\n' +
        "flotilla: config set-context: --cert and --key go together\n",
    );
    expect(memory.files[CONFIG]).toBeUndefined();
  });

  it("use-context switches, get-contexts marks the current one, view redacts tokens", async () => {
    const memory = io({
      [CONFIG]: [
        "currentContext: a",
        "contexts:",
        '  - {name: a, hub: "h:1", insecurePlaintext: true}',
        '  - {name: b, hub: "h:2", caFile: /ca.pem, token: very-secret-token-123}',
      ].join("\n"),
    });
    expect((await cli(["config", "use-context", "b"], memory)).out).toBe(
      'Switched to context "b".\n',
    );
    const table = await cli(
      ["config", "get-contexts"],
      io({ [CONFIG]: memory.files[CONFIG] ?? "" }),
    );
    expect(table.out).toBe(
      [
        "CURRENT  NAME  HUB  AUTH",
        "         a     h:1  plaintext",
        "*        b     h:2  TLS + token",
        "",
      ].join("\n"),
    );
    const view = await cli(
      ["config", "view"],
      io({ [CONFIG]: memory.files[CONFIG] ?? "" }),
    );
    expect(view.out).toContain("token: REDACTED");
    expect(view.out).not.toContain("very-secret");
    const missing = await cli(
      ["config", "use-context", "zz"],
      io({ [CONFIG]: memory.files[CONFIG] ?? "" }),
    );
    expect(missing.code).toBe(1);
    expect(missing.err).toBe(
      `flotilla: config use-context: no context "zz" in ${CONFIG} (contexts: a, b)\n`,
    );
  });
});
