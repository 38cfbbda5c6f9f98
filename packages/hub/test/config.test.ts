import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { formatProblem, type Problem } from "@flotilla/core";
import {
  HUB_USAGE,
  parseHubConfig,
  type HubConfig,
} from "../src/config/config.js";

const PLAIN = ["--insecure-plaintext"];

function parsed(
  argv: readonly string[],
  env: Record<string, string> = {},
): HubConfig {
  const result = parseHubConfig(argv, env);
  if (!result.ok) {
    throw new Error(result.problems.map(formatProblem).join("\n"));
  }
  return result.value;
}

function problems(
  argv: readonly string[],
  env: Record<string, string> = {},
): readonly Problem[] {
  const result = parseHubConfig(argv, env);
  if (result.ok) throw new Error("expected problems, got a config");
  return result.problems;
}

let dir: string;
let cert: string;
let key: string;
let ca: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flotilla-hub-config-"));
  cert = join(dir, "hub.crt");
  key = join(dir, "hub.key");
  ca = join(dir, "ca.crt");
  for (const file of [cert, key, ca]) await writeFile(file, "PEM\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("parseHubConfig", () => {
  test("defaults", () => {
    expect(parsed(PLAIN)).toEqual({
      help: false,
      listen: "127.0.0.1:7070",
      httpListen: "127.0.0.1:7071",
      nats: ["nats://127.0.0.1:4222"],
      statePrefix: "flotilla",
      jetstreamReplicas: 1,
      insecurePlaintext: true,
      tls: undefined,
      heartbeatIntervalMs: 10_000,
      missedHeartbeats: 3,
      passIntervalMs: 5_000,
      replicaId: undefined,
      leaseTtlMs: 10_000,
      auditMaxBytes: 1024 ** 3,
      shutdownTimeoutMs: 10_000,
      helm: "helm",
      kubectl: "kubectl",
      bundleRevisionHistory: 10,
      bundleContentGc: { intervalMs: 600_000, graceMs: 3_600_000 },
      logLevel: "info",
      charts: { helm: "helm", credentialsFile: undefined, timeoutMs: 120_000 },
      git: {
        binary: "git",
        timeoutMs: 60_000,
        maxBytes: 256 * 1024 * 1024,
        maxFiles: 10_000,
        concurrency: 4,
        webhookSecret: undefined,
        webhookSecretFile: undefined,
      },
      adminTokensFile: undefined,
      natsCredsFile: undefined,
      natsAccountSigningKeyFile: undefined,
      agentNatsServers: ["nats://127.0.0.1:4222"],
      refusalAudit: { perPeer: 100, windowMs: 60_000, maxPeers: 10_000 },
    });
  });

  test("takes the helm binary, the chart credentials file and the fetch timeout, and names a missing file", () => {
    const creds = join(dir, "hub.crt");
    const config = parsed(
      [...PLAIN, "--helm", "/opt/helm", "--chart-fetch-timeout=30s"],
      {
        FLOTILLA_CHART_CREDENTIALS: creds,
      },
    );
    expect(config).toMatchObject({
      charts: { helm: "/opt/helm", credentialsFile: creds, timeoutMs: 30_000 },
    });
    const missing = join(dir, "no-creds.yaml");
    expect(problems([...PLAIN, "--chart-credentials", missing])).toEqual([
      {
        path: "--chart-credentials",
        message:
          "names a file that does not exist (--chart-credentials or FLOTILLA_CHART_CREDENTIALS)",
        value: missing,
      },
    ]);
  });

  test("git options: limits, the webhook secret given once, and bad values named", () => {
    expect(
      parsed([...PLAIN, "--git-timeout", "30s", "--git-max-files=5"], {
        FLOTILLA_GIT_MAX_BYTES: "2MiB",
        FLOTILLA_GIT_WEBHOOK_SECRET: "s",
      }),
    ).toMatchObject({
      git: {
        timeoutMs: 30_000,
        maxBytes: 2 * 1024 * 1024,
        maxFiles: 5,
        webhookSecret: "s",
      },
    });
    expect(
      problems(
        [...PLAIN, "--git-webhook-secret", "s", "--git-max-files", "0"],
        { FLOTILLA_GIT_WEBHOOK_SECRET_FILE: join(dir, "missing") },
      ).map((p) => `${p.path}: ${p.message}`),
    ).toEqual([
      "--git-max-files: must be a whole number from 1 to 10000000 (--git-max-files or FLOTILLA_GIT_MAX_FILES)",
      expect.stringMatching(
        /^FLOTILLA_GIT_WEBHOOK_SECRET_FILE: cannot be combined with --git-webhook-secret/,
      ) as string,
      expect.stringMatching(
        /^FLOTILLA_GIT_WEBHOOK_SECRET_FILE: names a file that does not exist/,
      ) as string,
    ]);
  });

  test("limits the audit of refused calls as told, by flag or variable, and names a bad value", () => {
    expect(
      parsed(
        [
          ...PLAIN,
          "--audit-refusals-per-peer",
          "0",
          "--audit-refusals-window=10s",
        ],
        { FLOTILLA_AUDIT_REFUSALS_PEERS: "500" },
      ),
    ).toMatchObject({
      refusalAudit: { perPeer: 0, windowMs: 10_000, maxPeers: 500 },
    });
    expect(
      problems([...PLAIN, "--audit-refusals-window", "10ms"], {
        FLOTILLA_AUDIT_REFUSALS_PER_PEER: "-1",
        FLOTILLA_AUDIT_REFUSALS_PEERS: "0",
      }),
    ).toEqual([
      {
        path: "FLOTILLA_AUDIT_REFUSALS_PER_PEER",
        message:
          "must be a whole number from 0 to 1000000 (--audit-refusals-per-peer or FLOTILLA_AUDIT_REFUSALS_PER_PEER)",
        value: "-1",
      },
      {
        path: "--audit-refusals-window",
        message:
          "must be a duration from 1000ms to 24h, like 500ms, 10s or 1m (--audit-refusals-window or FLOTILLA_AUDIT_REFUSALS_WINDOW)",
        value: "10ms",
      },
      {
        path: "FLOTILLA_AUDIT_REFUSALS_PEERS",
        message:
          "must be a whole number from 1 to 1000000 (--audit-refusals-peers or FLOTILLA_AUDIT_REFUSALS_PEERS)",
        value: "0",
      },
    ]);
  });

  test("reads every setting from flags, in both spellings", () => {
    expect(
      parsed([
        ...PLAIN,
        "--listen",
        "0.0.0.0:9000",
        "--http-listen=[::1]:9001",
        "--nats",
        "nats://a:4222, tls://b:4222,c:4222",
        "--state-prefix",
        "prod_hub",
        "--heartbeat-interval",
        "1m30s",
        "--missed-heartbeats=5",
        "--pass-interval",
        "500ms",
        "--bundle-content-gc-interval=5m",
        "--bundle-content-gc-grace",
        "2h",
        "--bundle-revision-history=0",
        "--log-level",
        "debug",
      ]),
    ).toMatchObject({
      listen: "0.0.0.0:9000",
      httpListen: "[::1]:9001",
      nats: ["nats://a:4222", "tls://b:4222", "c:4222"],
      statePrefix: "prod_hub",
      heartbeatIntervalMs: 90_000,
      missedHeartbeats: 5,
      passIntervalMs: 500,
      bundleContentGc: { intervalMs: 300_000, graceMs: 7_200_000 },
      bundleRevisionHistory: 0,
      logLevel: "debug",
    });
  });

  test("falls back to the environment; a flag wins; an empty variable is unset", () => {
    const env = {
      FLOTILLA_HUB_LISTEN: "10.0.0.1:7000",
      FLOTILLA_HUB_HTTP_LISTEN: "off",
      FLOTILLA_NATS: "nats://env:4222",
      FLOTILLA_STATE_PREFIX: "",
      FLOTILLA_INSECURE_PLAINTEXT: "1",
      FLOTILLA_HEARTBEAT_INTERVAL: "2s",
      FLOTILLA_LOG_LEVEL: "warn",
    };
    expect(parsed(["--nats", "nats://flag:4222"], env)).toMatchObject({
      listen: "10.0.0.1:7000",
      httpListen: undefined,
      nats: ["nats://flag:4222"],
      statePrefix: "flotilla",
      insecurePlaintext: true,
      heartbeatIntervalMs: 2_000,
      logLevel: "warn",
    });
  });

  test("--http-listen off disables the HTTP server", () => {
    expect(parsed([...PLAIN, "--http-listen", "off"]).help).toBe(false);
    expect(parsed([...PLAIN, "--http-listen", "off"])).toMatchObject({
      httpListen: undefined,
    });
  });

  test("TLS files that exist give a TLS config", () => {
    expect(
      parsed([
        "--tls-cert",
        cert,
        "--tls-key",
        key,
        "--ca-cert",
        ca,
        "--ca-key",
        key,
      ]),
    ).toMatchObject({
      insecurePlaintext: false,
      tls: { certFile: cert, keyFile: key, caCertFile: ca, caKeyFile: key },
    });
    expect(
      parsed([], { FLOTILLA_TLS_CERT: cert, FLOTILLA_TLS_KEY: key }),
    ).toMatchObject({ tls: { certFile: cert, keyFile: key } });
  });

  test("without flags it serves TLS with the hub's CA and a certificate for localhost and the listen host", () => {
    expect(parsed(["--listen", "hub.example:7070"])).toMatchObject({
      insecurePlaintext: false,
      tls: {
        sans: ["localhost", "127.0.0.1", "hub.example"],
        clusterCertTtlMs: 30 * 24 * 3_600_000,
      },
    });
    const tls = parsed([
      "--tls-san",
      "hub.internal,10.0.0.7",
      "--cluster-cert-ttl",
      "7d",
      "--write-ca",
      join(dir, "ca.pem"),
    ]);
    expect(tls).toMatchObject({
      tls: {
        sans: ["hub.internal", "10.0.0.7"],
        clusterCertTtlMs: 7 * 24 * 3_600_000,
        writeCaFile: join(dir, "ca.pem"),
      },
    });
    expect(parsed([], { FLOTILLA_INSECURE_PLAINTEXT: "0" })).toMatchObject({
      insecurePlaintext: false,
    });
  });

  test("refuses the retired --tls-ca, a CA without its key, bad SANs and TLS flags with plaintext", () => {
    expect(problems(["--tls-ca", ca]).map((p) => p.path)).toEqual(["--tls-ca"]);
    expect(problems(["--ca-cert", ca]).map((p) => p.path)).toEqual([
      "--ca-key",
    ]);
    expect(problems(["--tls-san", "ok.example,not a name"])).toEqual([
      expect.objectContaining({
        path: "--tls-san",
        message: expect.stringContaining(
          '"not a name" is neither a DNS name nor an IP address',
        ) as string,
      }),
    ]);
    expect(
      problems([
        ...PLAIN,
        "--write-ca",
        "ca.pem",
        "--cluster-cert-ttl",
        "1d",
      ]).map((p) => p.path),
    ).toEqual(["--write-ca", "--cluster-cert-ttl"]);
  });

  test("refuses TLS files that are missing, unreadable or not files", async () => {
    const locked = join(dir, "locked.key");
    await writeFile(locked, "PEM\n");
    await chmod(locked, 0o000);
    const missing = join(dir, "missing.crt");
    const found = problems(["--tls-cert", missing, "--tls-key", dir]);
    expect(found).toEqual([
      {
        path: "--tls-cert",
        message:
          "names a file that does not exist (--tls-cert or FLOTILLA_TLS_CERT)",
        value: missing,
      },
      {
        path: "--tls-key",
        message: "must be a regular file (--tls-key or FLOTILLA_TLS_KEY)",
        value: dir,
      },
    ]);
    // root reads any file: the permission check only means something for other users.
    if (process.getuid?.() !== 0) {
      expect(
        problems(["--tls-cert", cert, "--tls-key", locked]).map(
          (p) => p.message,
        ),
      ).toEqual(["cannot be read (EACCES) (--tls-key or FLOTILLA_TLS_KEY)"]);
    }
  });

  test("--nats-auth-dir needs the five files the hub reads, and not --nats-creds beside it", async () => {
    const setup = join(dir, "nats-setup");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(setup, { recursive: true });
    // An earlier version's directory: hub.creds and account-signing.nk only.
    await writeFile(join(setup, "hub.creds"), "creds\n");
    await writeFile(join(setup, "account-signing.nk"), "seed\n");
    const found = problems([...PLAIN, "--nats-auth-dir", setup]);
    expect(found.map((p) => p.message)).toEqual(
      [
        "hub-system.creds",
        "agents-account.jwt",
        "agents-signing.nk",
        "operator-signing.nk",
      ].map(
        (file) =>
          `${file} in it names a file that does not exist (run flotilla-hub nats-setup --out DIR, or --from OLD_DIR for a directory of an earlier version)`,
      ),
    );
    for (const file of [
      "hub-system.creds",
      "agents-account.jwt",
      "agents-signing.nk",
      "operator-signing.nk",
    ])
      await writeFile(join(setup, file), "x\n");
    const config = parsed([...PLAIN, "--nats-auth-dir", setup]);
    expect(config).toMatchObject({
      natsAuthDir: setup,
      natsCredsFile: undefined,
    });
    expect(
      problems([
        ...PLAIN,
        "--nats-auth-dir",
        setup,
        "--nats-creds",
        join(setup, "hub.creds"),
      ]).map((p) => p.path),
    ).toEqual(["--nats-auth-dir"]);
    // The flag of the single-account setup says what replaced it.
    expect(
      problems([...PLAIN, "--nats-account-signing-key=x"])[0]?.message,
    ).toMatch(/^was replaced by --nats-auth-dir/);
  });

  test("a certificate needs its key, and TLS cannot be combined with plaintext", () => {
    expect(problems(["--tls-cert", cert]).map((p) => p.path)).toEqual([
      "--tls-key",
    ]);
    expect(
      problems([...PLAIN, "--tls-cert", cert, "--tls-key", key]).map(
        (p) => p.path,
      ),
    ).toEqual(["--tls-cert", "--tls-key"]);
  });

  test("reports every bad value at once, naming the flag, the variable and the value", () => {
    const found = problems(
      [
        ...PLAIN,
        "--listen",
        "localhost",
        "--heartbeat-interval",
        "10",
        "--log-level",
        "loud",
      ],
      {
        FLOTILLA_NATS: "http://x:4222",
        FLOTILLA_STATE_PREFIX: "a.b",
        FLOTILLA_PASS_INTERVAL: "0s",
        FLOTILLA_MISSED_HEARTBEATS: "0",
      },
    );
    expect(found.map((p) => [p.path, p.value])).toEqual([
      ["--listen", "localhost"],
      ["FLOTILLA_NATS", "http://x:4222"],
      ["FLOTILLA_STATE_PREFIX", "a.b"],
      ["--heartbeat-interval", "10"],
      ["FLOTILLA_MISSED_HEARTBEATS", "0"],
      ["FLOTILLA_PASS_INTERVAL", "0s"],
      ["--log-level", "loud"],
    ]);
    expect(found.map(formatProblem)).toContain(
      '--listen: must be HOST:PORT with a port from 0 to 65535, e.g. 127.0.0.1:7070 or [::1]:7070 (--listen or FLOTILLA_HUB_LISTEN) (got "localhost")',
    );
    expect(found[6]?.message).toBe(
      "must be one of trace, debug, info, warn, error, fatal (--log-level or FLOTILLA_LOG_LEVEL)",
    );
    expect(found[3]?.message).toMatch(
      /^must be a duration .* \(--heartbeat-interval or FLOTILLA_HEARTBEAT_INTERVAL\)$/,
    );
  });

  test.each([
    ["a port over 65535", [...PLAIN, "--listen", "127.0.0.1:70000"]],
    ["an empty host", [...PLAIN, "--listen", ":7070"]],
    ["a duration over an hour", [...PLAIN, "--pass-interval", "2h"]],
    ["a negative duration", [...PLAIN, "--pass-interval=-5s"]],
    [
      "a collection grace under a minute",
      [...PLAIN, "--bundle-content-gc-grace", "30s"],
    ],
    ["an unknown unit", [...PLAIN, "--heartbeat-interval", "10d"]],
    ["an empty NATS entry", [...PLAIN, "--nats", "nats://a:4222,"]],
    ["a bad boolean", ["--insecure-plaintext=maybe"]],
  ])("refuses %s", (_, argv) => {
    expect(problems(argv)).toHaveLength(1);
  });

  test("reads the audit stream's size in bytes or binary units", () => {
    expect(parsed([...PLAIN, "--audit-max-bytes", "512MiB"])).toMatchObject({
      auditMaxBytes: 512 * 1024 ** 2,
    });
    expect(
      parsed([...PLAIN], { FLOTILLA_AUDIT_MAX_BYTES: "2Gi" }),
    ).toMatchObject({ auditMaxBytes: 2 * 1024 ** 3 });
    expect(parsed([...PLAIN, "--audit-max-bytes=16777216"])).toMatchObject({
      auditMaxBytes: 16 * 1024 ** 2,
    });
  });

  test.each([
    ["a decimal unit", "1GB"],
    ["less than 1MiB", "512KiB"],
    ["a fraction", "1.5GiB"],
    ["no number", "GiB"],
  ])(
    "refuses an audit size with %s, naming flag, variable and value",
    (_, value) => {
      const found = problems([...PLAIN, "--audit-max-bytes", value]);
      expect(found.map(formatProblem)).toEqual([
        `--audit-max-bytes: must be a size of at least 1MiB: bytes, or a number with KiB, MiB, GiB or TiB, like 256MiB (--audit-max-bytes or FLOTILLA_AUDIT_MAX_BYTES) (got "${value}")`,
      ]);
    },
  );

  test("reads the JetStream replica count by flag or variable", () => {
    expect(parsed([...PLAIN, "--jetstream-replicas", "3"])).toMatchObject({
      jetstreamReplicas: 3,
    });
    expect(
      parsed([...PLAIN], { FLOTILLA_JETSTREAM_REPLICAS: "5" }),
    ).toMatchObject({ jetstreamReplicas: 5 });
  });

  test.each(["0", "6", "3.5", "three", "-1"])(
    "refuses the JetStream replica count %s, naming flag, variable and value",
    (value) => {
      expect(
        problems([...PLAIN], { FLOTILLA_JETSTREAM_REPLICAS: value }).map(
          formatProblem,
        ),
      ).toEqual([
        `FLOTILLA_JETSTREAM_REPLICAS: must be a whole number from 1 to 5 (--jetstream-replicas or FLOTILLA_JETSTREAM_REPLICAS) (got "${value}")`,
      ]);
    },
  );

  test("reads the stop deadline", () => {
    expect(
      parsed([...PLAIN], { FLOTILLA_SHUTDOWN_TIMEOUT: "30s" }),
    ).toMatchObject({ shutdownTimeoutMs: 30_000 });
  });

  test("refuses a stop deadline under a second", () => {
    expect(
      problems([...PLAIN, "--shutdown-timeout", "500ms"]).map((p) => [
        p.path,
        p.value,
      ]),
    ).toEqual([["--shutdown-timeout", "500ms"]]);
  });

  test("refuses the same address for gRPC and HTTP", () => {
    expect(
      problems([
        ...PLAIN,
        "--listen",
        "127.0.0.1:9000",
        "--http-listen",
        "127.0.0.1:9000",
      ]).map((p) => p.path),
    ).toEqual(["--http-listen"]);
  });

  test("refuses unknown flags (with a suggestion), stray arguments, missing and repeated values", () => {
    expect(
      problems([
        ...PLAIN,
        "--lissten",
        "x",
        "serve",
        "--nats",
        "nats://a:1",
        "--nats",
        "nats://b:1",
        "--log-level",
      ]),
    ).toEqual([
      {
        path: "--lissten",
        message: "unknown flag; did you mean --listen? (see --help)",
        value: "--lissten",
      },
      {
        path: "argv",
        message: "unexpected argument: the hub takes flags only (see --help)",
        value: "x",
      },
      {
        path: "argv",
        message: "unexpected argument: the hub takes flags only (see --help)",
        value: "serve",
      },
      {
        path: "--nats",
        message: "is given more than once",
        value: "nats://b:1",
      },
      { path: "--log-level", message: "needs a value: --log-level LEVEL" },
    ]);
  });

  test("--help and -h win over every other problem", () => {
    expect(parsed(["--help"])).toEqual({ help: true });
    expect(parsed(["--bogus", "-h"])).toEqual({ help: true });
  });
});

describe("HUB_USAGE", () => {
  test("lists every flag with its variable and default", () => {
    for (const text of [
      "--listen HOST:PORT",
      "[FLOTILLA_HUB_LISTEN]",
      "(default 127.0.0.1:7070)",
      "--http-listen HOST:PORT|off",
      "--insecure-plaintext",
      "--tls-cert FILE",
      "--heartbeat-interval DURATION",
      "(default 10s)",
      "--missed-heartbeats N",
      "--pass-interval DURATION",
      "--bundle-content-gc-interval DURATION",
      "[FLOTILLA_BUNDLE_CONTENT_GC_GRACE]",
      "(default 1h)",
      "--log-level LEVEL",
      "--audit-refusals-per-peer N",
      "[FLOTILLA_AUDIT_REFUSALS_WINDOW]",
      "--audit-refusals-peers N",
      "--jetstream-replicas N",
      "[FLOTILLA_JETSTREAM_REPLICAS]",
      "--help",
    ]) {
      expect(HUB_USAGE).toContain(text);
    }
  });
});
