// Joining the fleet through `flotilla-agent` itself: the identity flags and how they go with the
// transport flags (exit 2 naming them), a refused bootstrap token (exit 1 with the hub's reason on
// stderr), and a registration that stores the identity (not the token) and connects to the hub
// with the issued certificate.
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { pino } from "pino";
import {
  freePort,
  startNatsServer,
  waitFor,
  type NatsServer,
} from "@flotilla/testkit";
import { main } from "../src/main.js";
import { parseAgentConfig } from "../src/config/config.js";
import { FakeIdentityHub } from "./support/fake-identity-hub.js";
import { TestCa } from "./support/test-ca.js";

const TOKEN = "fbt_main-test-token";

async function run(
  argv: readonly string[],
  env: Record<string, string> = {},
  signal: AbortSignal = AbortSignal.abort(),
): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const code = await main(argv, env, {
    stdout: () => undefined,
    stderr: (t) => (stderr += t),
    signal,
    createLogger: () => pino({ level: "silent" }),
  });
  return { code, stderr };
}

describe("identity configuration", () => {
  const TLS = ["--simulated", "c.yaml", "--tls-ca", "ca.pem"];

  test("with TLS and no client certificate, identities live under the state directory", () => {
    expect(
      parseAgentConfig([...TLS, "--state-dir", "/var/lib/f"], {}),
    ).toMatchObject({
      type: "config",
      config: { identity: { dir: "/var/lib/f/identities" } },
    });
    const parsed = parseAgentConfig(
      [
        ...TLS,
        "--identity-dir",
        "/ids",
        "--bootstrap-token-file",
        "/run/token",
      ],
      {},
    );
    expect(parsed).toMatchObject({
      config: {
        identity: {
          dir: "/ids",
          bootstrapToken: { type: "file", file: "/run/token" },
        },
      },
    });
    expect(
      parseAgentConfig([...TLS, "--identity-dir", "/ids"], {
        FLOTILLA_BOOTSTRAP_TOKEN: ` ${TOKEN} `,
      }),
    ).toMatchObject({
      config: {
        identity: {
          bootstrapToken: {
            type: "env",
            variable: "FLOTILLA_BOOTSTRAP_TOKEN",
            value: TOKEN,
          },
        },
      },
    });
    // A client certificate given by the operator needs no identity.
    const withCert = parseAgentConfig(
      [...TLS, "--tls-cert", "a.pem", "--tls-key", "a.key"],
      {},
    );
    expect(withCert.type === "config" && withCert.config.identity).toBe(
      undefined,
    );
  });

  test("identity settings that cannot apply exit 2 naming them", async () => {
    const plaintext = await run(
      ["--insecure-plaintext", "--simulated", "c.yaml"],
      {
        FLOTILLA_BOOTSTRAP_TOKEN: TOKEN,
      },
    );
    expect(plaintext).toEqual({
      code: 2,
      stderr:
        "flotilla-agent: FLOTILLA_BOOTSTRAP_TOKEN: registration needs TLS and does not apply with --insecure-plaintext\n",
    });
    const both = await run(
      [...TLS, "--state-dir", "s", "--bootstrap-token-file", "t"],
      {
        FLOTILLA_BOOTSTRAP_TOKEN: TOKEN,
      },
    );
    expect(both.stderr).toBe(
      "flotilla-agent: --bootstrap-token-file and FLOTILLA_BOOTSTRAP_TOKEN: choose one\n",
    );
    const cert = await run([
      ...TLS,
      ...["--tls-cert", "a.pem", "--tls-key", "a.key", "--identity-dir", "ids"],
    ]);
    expect(cert.stderr).toBe(
      "flotilla-agent: --identity-dir: does not apply with --tls-cert, which is already the client certificate\n",
    );
    const nowhere = await run(TLS);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain(
      "The hub needs a client certificate: pass --state-dir DIR or --identity-dir DIR",
    );
  });
});

describe("registering through the agent process", () => {
  let dir: string;
  let ca: TestCa;
  let nats: NatsServer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "flotilla-identity-main-"));
    ca = await TestCa.create();
    await writeFile(join(dir, "ca.pem"), ca.pem);
    await writeFile(join(dir, "cluster.yaml"), "kubernetesVersion: 1.30.5\n");
    await writeFile(join(dir, "token"), `${TOKEN}\n`);
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const argv = (
    hub: FakeIdentityHub,
    stateDir: string,
    metricsListen = "off",
  ): string[] => [
    ...["--hub", hub.address, "--tls-ca", join(dir, "ca.pem")],
    ...["--simulated", join(dir, "cluster.yaml"), "--cluster-name", "edge-1"],
    ...["--state-dir", stateDir, "--nats", nats.url],
    ...["--metrics-listen", metricsListen],
    ...["--bootstrap-token-file", join(dir, "token")],
  ];

  test("a refused token exits 1 with the hub's reason", async () => {
    await using hub = await FakeIdentityHub.start(ca);
    hub.addToken({ secret: TOKEN, maxUses: 1, cluster: "edge-2" });
    const result = await run(
      argv(hub, join(dir, "refused")),
      {},
      new AbortController().signal,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `flotilla-agent: Cannot register cluster "edge-1" with the hub "${hub.address}": The bootstrap token is bound to cluster "edge-2"\n`,
    );
  });

  test("registers, keeps the identity but not the token, and connects with the certificate", async () => {
    await using hub = await FakeIdentityHub.start(ca);
    hub.addToken({ secret: TOKEN, maxUses: 1 });
    const stateDir = join(dir, "joined");
    const stop = new AbortController();
    const metricsPort = await freePort();
    const running = run(
      argv(hub, stateDir, `127.0.0.1:${String(metricsPort)}`),
      {},
      stop.signal,
    );
    let metrics: string;
    try {
      await waitFor(() => hub.streams.some((s) => s.hello === "edge-1"), {
        timeoutMs: 15_000,
      });
      expect(hub.streams[0]?.peer?.cluster).toBe("edge-1");
      metrics = await (
        await fetch(`http://127.0.0.1:${String(metricsPort)}/metrics`)
      ).text();
    } finally {
      stop.abort();
    }
    expect(await running).toEqual({ code: 0, stderr: "" });
    const identityDir = join(stateDir, "identities", "edge-1");
    const stored = JSON.parse(
      await readFile(join(identityDir, "identity.json"), "utf8"),
    ) as { clusterName: string; expiresAtMs: number };
    expect(stored).toMatchObject({ clusterName: "edge-1" });
    // The expiry gauge shows the certificate's notAfter, in seconds.
    expect(metrics).toContain(
      `flotilla_agent_identity_certificate_expiry_timestamp_seconds ${String(stored.expiresAtMs / 1000)}\n`,
    );
    for (const entry of await readdir(identityDir, {
      recursive: true,
      withFileTypes: true,
    }))
      if (entry.isFile())
        expect(
          await readFile(join(entry.parentPath, entry.name), "utf8"),
        ).not.toContain(TOKEN);
  });
});
