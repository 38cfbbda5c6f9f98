// flotilla-agent's configuration: flags with environment fallbacks, every problem named by the
// flag or variable and the value, exit 2 on bad configuration.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { pino } from "pino";
import { AGENT_VERSION } from "@flotilla/agent";
import { main } from "../src/main.js";
import { parseAgentConfig } from "../src/config/config.js";

const BASE = ["--insecure-plaintext", "--simulated", "cluster.yaml"];

async function run(
  argv: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, env, {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    signal: AbortSignal.abort(),
    createLogger: () => pino({ level: "silent" }),
  });
  return { code, stdout, stderr };
}

describe("configuration", () => {
  test("defaults", () => {
    expect(parseAgentConfig(BASE, {})).toEqual({
      type: "config",
      config: {
        hub: ["127.0.0.1:7070"],
        transport: { insecurePlaintext: true },
        nats: ["nats://127.0.0.1:4222"],
        intentsPrefix: "flotilla",
        backend: { type: "simulated", file: "cluster.yaml" },
        metricsListen: { host: "127.0.0.1", port: 9464 },
        logLevel: "info",
        windowsReloadIntervalMs: 30_000,
      },
    });
  });

  test("environment variables fill in for flags, flags win, empty values are unset", () => {
    const parsed = parseAgentConfig(
      ["--hub", "10.0.0.1:7001", "--cluster-name", "edge-7"],
      {
        FLOTILLA_HUB: "hub.example:7000",
        FLOTILLA_INSECURE_PLAINTEXT: "1",
        FLOTILLA_SIMULATED: "/etc/sim.yaml",
        FLOTILLA_NATS: "nats://a:4222, nats://b:4222",
        FLOTILLA_METRICS_LISTEN: "off",
        FLOTILLA_STATE_DIR: "",
        FLOTILLA_CLUSTER_NAME: "ignored",
      },
    );
    expect(parsed).toMatchObject({
      type: "config",
      config: {
        hub: ["10.0.0.1:7001"],
        transport: { insecurePlaintext: true },
        nats: ["nats://a:4222", "nats://b:4222"],
        backend: {
          type: "simulated",
          file: "/etc/sim.yaml",
          clusterName: "edge-7",
        },
      },
    });
    if (parsed.type !== "config") throw new Error("unreachable");
    expect(parsed.config.metricsListen).toBeUndefined();
    expect(parsed.config.stateDir).toBeUndefined();
  });

  test("TLS files, and a fleet instead of one cluster", () => {
    expect(
      parseAgentConfig(
        [
          "--tls-ca",
          "ca.pem",
          "--tls-cert",
          "agent.pem",
          "--tls-key",
          "agent.key",
          "--simulated-fleet",
          "fleet.yaml",
          "--metrics-listen",
          "0.0.0.0:0",
        ],
        {},
      ),
    ).toMatchObject({
      type: "config",
      config: {
        transport: {
          tls: {
            caFile: "ca.pem",
            certFile: "agent.pem",
            keyFile: "agent.key",
          },
        },
        backend: { type: "simulatedFleet", file: "fleet.yaml" },
        metricsListen: { host: "0.0.0.0", port: 0 },
      },
    });
  });

  test("the maintenance files' reload interval is a duration", async () => {
    const parsed = parseAgentConfig(
      [...BASE, "--windows-reload-interval", "500ms"],
      {},
    );
    expect(parsed).toMatchObject({
      type: "config",
      config: { windowsReloadIntervalMs: 500 },
    });
    expect(parseAgentConfig(BASE, {})).toMatchObject({
      config: { windowsReloadIntervalMs: 30_000 },
    });
    const bad = await run([...BASE, "--windows-reload-interval", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /--windows-reload-interval "soon": must be a duration/,
    );
  });

  test("a bad flag value exits 2 naming the flag and the value", async () => {
    const result = await run([...BASE, "--hub", "nohost"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'flotilla-agent: --hub "nohost": must be HOST:PORT with a port from 1 to 65535\n',
    );
  });

  test("a bad environment value names the variable; every problem is reported at once", async () => {
    const result = await run(
      [...BASE, "--log-level", "loud", "--metrics-listen", "localhost"],
      { FLOTILLA_NATS: "http://x:1", FLOTILLA_INTENTS_PREFIX: "a.b" },
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split("\n").sort()).toEqual(
      [
        'flotilla-agent: FLOTILLA_NATS "http://x:1": "http://x:1" is not a NATS URL (nats://HOST:PORT; several separated by commas)',
        "flotilla-agent: FLOTILLA_INTENTS_PREFIX \"a.b\": must be 1 to 32 letters, digits, '_' or '-'",
        'flotilla-agent: --metrics-listen "localhost": must be HOST:PORT (port 0 picks a free one) or off',
        'flotilla-agent: --log-level "loud": must be one of fatal, error, warn, info, debug, trace, silent',
      ].sort(),
    );
  });

  test("refuses to start without TLS unless plaintext is asked for, saying how", async () => {
    const result = await run(["--simulated", "c.yaml"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "Refusing to connect to the hub without TLS: pass --tls-ca FILE",
    );
    expect(result.stderr).toContain(
      "or --insecure-plaintext (FLOTILLA_INSECURE_PLAINTEXT=1)",
    );
    const bad = await run(["--simulated", "c.yaml"], {
      FLOTILLA_INSECURE_PLAINTEXT: "maybe",
    });
    expect(bad.stderr).toBe(
      'flotilla-agent: FLOTILLA_INSECURE_PLAINTEXT "maybe": must be 1/true/yes/on or 0/false/no/off\n',
    );
    const both = await run([...BASE, "--tls-ca", "ca.pem"]);
    expect(both.stderr).toContain(
      "--insecure-plaintext and --tls-ca contradict each other",
    );
    const half = await run([
      "--simulated",
      "c.yaml",
      "--tls-ca",
      "ca.pem",
      "--tls-cert",
      "a.pem",
    ]);
    expect(half.stderr).toBe(
      'flotilla-agent: --tls-cert "a.pem": needs --tls-key as well\n',
    );
  });

  test("without a backend it exits 2 naming the three choices", async () => {
    const result = await run(["--insecure-plaintext"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "flotilla-agent: No cluster to manage: run with --kubernetes in-cluster|KUBECONFIG_FILE and --cluster-name NAME (a real cluster), --simulated CONFIG_FILE (one simulated cluster) or --simulated-fleet FILE (many)\n",
    );
  });

  test("unknown flags, and flags that do not go together", async () => {
    const unknown = await run([...BASE, "--kubeconfig", "x"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--kubeconfig");
    const both = await run([
      "--insecure-plaintext",
      "--simulated",
      "a.yaml",
      "--simulated-fleet",
      "b.yaml",
    ]);
    expect(both.stderr).toBe(
      'flotilla-agent: --simulated "a.yaml" and --simulated-fleet "b.yaml": choose one\n',
    );
    const named = await run([
      "--insecure-plaintext",
      "--simulated-fleet",
      "b.yaml",
      "--cluster-name",
      "BAD_NAME",
    ]);
    expect(named.stderr.trimEnd().split("\n")).toEqual([
      "flotilla-agent: --cluster-name \"BAD_NAME\": must be a DNS label: lower-case letters, digits and '-', starting and ending alphanumeric",
      'flotilla-agent: --cluster-name "BAD_NAME": does not apply to --simulated-fleet, whose file names its clusters',
    ]);
  });

  test("a bad simulated cluster file exits 2 naming the file and the field", async () => {
    const dir = await mkdtemp(join(tmpdir(), "flotilla-agent-main-"));
    try {
      const file = join(dir, "cluster.yaml");
      await writeFile(
        file,
        "kubernetesVersion: 1.30.5\nfailures: { applyRate: 2 }\n",
      );
      const result = await run([
        "--insecure-plaintext",
        "--simulated",
        file,
        "--cluster-name",
        "edge-1",
        "--metrics-listen",
        "off",
      ]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `Invalid simulated cluster file "${file}": failures.applyRate`,
      );
      const missing = await run([
        "--insecure-plaintext",
        "--simulated-fleet",
        join(dir, "nope.yaml"),
        "--metrics-listen",
        "off",
      ]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toBe(
        `flotilla-agent: Cannot load simulated fleet file "${join(dir, "nope.yaml")}": no such file\n`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("--help and --version exit 0", async () => {
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--simulated-fleet FILE");
    const version = await run(["--version"]);
    expect(version.stdout).toBe(`flotilla-agent ${AGENT_VERSION}\n`);
    const pkg = JSON.parse(
      await readFile(new URL("../package.json", import.meta.url), "utf8"),
    ) as { version: string; bin: Record<string, string> };
    expect(pkg.version).toBe(AGENT_VERSION);
    expect(pkg.bin["flotilla-agent"]).toBe("./dist/main.js");
  });
});
