/**
 * The security model end to end, with real processes set up as docs/security.md says: NATS in operator mode,
 * the hub on TLS with its CA, admin tokens per role, and simulated agents that join with a
 * bootstrap token. Unit tests cover each refusal in detail (packages/hub/test/security-*,
 * admin-auth*, nats-auth); this test proves the parts work together for a real user.
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { connect as tcpConnect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callUnary,
  createAdminServiceClient,
  createAgentServiceClient,
} from "@flotilla/protocol";
import { credentials, Metadata } from "@grpc/grpc-js";
// The hub's own test CA helper: certificates from a CA the hub has never seen.
import { createTestCa } from "../../packages/hub/test/admin-auth-pki.js";
import { runProcess, startProcess, waitFor } from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

let e2e: E2E;

beforeAll(async () => {
  e2e = await startE2E({ secure: true });
  await e2e.startAgents(
    "fleet",
    fleetFile([clusters("sec-", 3, { env: "prod" })]),
  );
  await e2e.connected(3);
}, 60_000);

afterAll(async () => {
  await e2e.stop();
});

function security() {
  const value = e2e.security;
  if (value === undefined) throw new Error("not in secure mode");
  return value;
}

/** Every file under `dir`, with its content. */
async function filesUnder(dir: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const entry of await readdir(dir, {
    recursive: true,
    withFileTypes: true,
  })) {
    // Identity files are symlinks into the current version's directory (as Secret mounts are).
    if (!entry.isFile() && !entry.isSymbolicLink()) continue;
    const path = join(entry.parentPath, entry.name);
    const content = await readFile(path, "utf8").catch(() => undefined);
    if (content !== undefined) found.set(path, content);
  }
  return found;
}

describe("a secured fleet", () => {
  it("agents registered with a bootstrap token, keep their identity and forget the token", async () => {
    const files = await filesUnder(e2e.stateDir("fleet"));
    const names = [...files.keys()].map((f) =>
      f.split("/").slice(-2).join("/"),
    );
    for (const cluster of ["sec-01", "sec-02", "sec-03"]) {
      expect(names).toContain(`${cluster}/cert.pem`);
      expect(names).toContain(`${cluster}/nats.creds`);
    }
    const { tokens } = await callUnary(e2e.admin, "listBootstrapTokens", {});
    expect(tokens.map((t) => t.uses)).toContain(3);
    // The secret itself is nowhere in the agents' state.
    const tokenFiles = (
      await readdir(join(e2e.stateDir("fleet"), ".."))
    ).filter((f) => f.startsWith("bootstrap-"));
    expect(tokenFiles.length).toBeGreaterThan(0);
    for (const file of tokenFiles) {
      const secret = (
        await readFile(join(e2e.stateDir("fleet"), "..", file), "utf8")
      ).trim();
      for (const content of files.values())
        expect(content).not.toContain(secret);
    }
  });

  it("runs a staged upgrade over mTLS and NATS credentials, started by an operator", async () => {
    const admin = security();
    const strategy = join(admin.natsSetupDir, "..", "strategy.json");
    await writeFile(
      strategy,
      JSON.stringify({
        stages: [
          {
            name: "all",
            memberSelector: { byLabel: "env=prod" },
            maxConcurrency: 2,
          },
        ],
      }),
    );
    const create = await admin.cli(
      "admin",
      "strategy",
      "create",
      "all",
      "-f",
      strategy,
    );
    expect(create.code, create.stderr).toBe(0);
    const run = await admin.cli(
      "operator",
      "run",
      "create",
      "up",
      "--strategy",
      "all",
      "--kubernetes-version",
      "1.30.3",
    );
    expect(run.code, run.stderr).toBe(0);

    // A viewer may look but not start; the refusal is audited with who tried.
    const denied = await admin.cli(
      "viewer",
      "run",
      "start",
      "up",
      "--reason",
      "try",
    );
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(
      /may not call StartUpdateRun: it needs role operator/,
    );
    const start = await admin.cli(
      "operator",
      "run",
      "start",
      "up",
      "--reason",
      "e2e",
    );
    expect(start.code, start.stderr).toBe(0);

    await waitFor(async () => (await e2e.run("up")).state === "Completed", {
      timeoutMs: 60_000,
      intervalMs: 250,
      message: "the run to complete",
    });
    const done = await e2e.run("up");
    const members = done.stages.flatMap((s) =>
      s.groups.flatMap((g) => g.members),
    );
    expect(members.map((m) => m.state)).toEqual([
      "Succeeded",
      "Succeeded",
      "Succeeded",
    ]);

    const { events } = await callUnary(e2e.admin, "listAuditEvents", {
      pageSize: 200,
    });
    expect(
      events.some(
        (e) =>
          e.actor === "token:e2e-viewer" &&
          e.outcome === "AUDIT_OUTCOME_DENIED" &&
          e.method.endsWith("/StartUpdateRun"),
      ),
      JSON.stringify(events.map((e) => [e.actor, e.outcome, e.method])),
    ).toBe(true);
    expect(
      events.some(
        (e) =>
          e.actor === "token:e2e-operator" &&
          e.method.endsWith("/StartUpdateRun") &&
          e.outcome === "AUDIT_OUTCOME_SUCCEEDED",
      ),
    ).toBe(true);
  });

  it("refuses callers without credentials, and an agent with a revoked token", async () => {
    const noToken = await runProcess({
      name: "flotilla",
      args: ["packages/cli/dist/main.js", "cluster", "list"],
      env: { FLOTILLA_HUB: e2e.hubAddress, FLOTILLA_TLS_CA: security().caFile },
    });
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toMatch(/Cannot authenticate/);
    expect(noToken.stderr).not.toMatch(/DEP0123|Warning/);

    const tokenFile = await security().bootstrapTokenFile(1, "late-01");
    const { tokens } = await callUnary(e2e.admin, "listBootstrapTokens", {});
    const late = tokens.find((t) => t.clusterName === "late-01");
    expect(late).toBeDefined();
    const revoke = await e2e.cli(
      "token",
      "revoke",
      late?.id ?? "",
      "--reason",
      "leaked",
    );
    expect(revoke.code, revoke.stderr).toBe(0);

    const fleet = join(security().natsSetupDir, "..", "late.json");
    await writeFile(
      fleet,
      JSON.stringify(fleetFile([{ name: "late-01", labels: {} }])),
    );
    const agent = startProcess({
      name: "late agent",
      args: [
        "packages/agent/dist/main.js",
        "--simulated-fleet",
        fleet,
        "--hub",
        e2e.hubAddress,
        "--tls-ca",
        security().caFile,
        "--bootstrap-token-file",
        tokenFile,
        "--nats",
        e2e.nats.url,
        "--state-dir",
        join(security().natsSetupDir, "..", "state-late"),
        "--metrics-listen",
        "off",
      ],
    });
    try {
      const exit = await agent.exited;
      expect(exit.code).not.toBe(0);
      expect(agent.output()).toMatch(/revoked/i);
    } finally {
      await agent.stop();
    }
    const { clusters: known } = await callUnary(e2e.admin, "listClusters", {
      pageSize: 100,
    });
    expect(known.map((c) => c.name)).not.toContain("late-01");
  });

  it("refuses garbage on the wire without disturbing connected agents", async () => {
    const [host, port] = [
      e2e.hubAddress.slice(0, e2e.hubAddress.lastIndexOf(":")),
      Number(e2e.hubAddress.slice(e2e.hubAddress.lastIndexOf(":") + 1)),
    ];
    // Random bytes instead of a TLS handshake.
    await new Promise<void>((resolve) => {
      const socket = tcpConnect(port, host, () => {
        socket.end(randomBytes(8192));
      });
      socket.on("close", () => {
        resolve();
      });
      socket.on("error", () => {
        resolve();
      });
    });
    const ca = await readFile(security().caFile);
    const code = async (
      call: () => Promise<unknown>,
    ): Promise<string | undefined> => {
      try {
        await call();
        return "ok";
      } catch (error) {
        return (error as { code?: string }).code;
      }
    };

    // An admin certificate from another CA.
    const mallory = await (
      await createTestCa("mallory")
    ).client("spiffe://flotilla/admin/admin/mallory");
    const forged = createAdminServiceClient(
      e2e.hubAddress,
      credentials.createSsl(
        ca,
        Buffer.from(mallory.keyPem),
        Buffer.from(mallory.certPem),
      ),
    );
    expect(await code(() => callUnary(forged, "listClusters", {}))).toBe(
      "unauthenticated",
    );
    forged.close();

    // Oversized and malformed bearer tokens.
    for (const header of [
      `Bearer ${"a".repeat(10_240)}`,
      "Bearer !!!",
      "Basic x",
    ]) {
      const client = createAdminServiceClient(
        e2e.hubAddress,
        credentials.combineChannelCredentials(
          credentials.createSsl(ca),
          credentials.createFromMetadataGenerator((_params, callback) => {
            const metadata = new Metadata();
            metadata.set("authorization", header);
            callback(null, metadata);
          }),
        ),
      );
      expect(await code(() => callUnary(client, "listClusters", {}))).toBe(
        "unauthenticated",
      );
      client.close();
    }

    // A registration with a made-up token.
    const agent = createAgentServiceClient(
      e2e.hubAddress,
      credentials.createSsl(ca),
    );
    expect(
      await code(() =>
        callUnary(agent, "register", {
          bootstrapToken: "flotilla-bt.bt-00000000.nope",
          clusterName: "sec-01",
          csrPem: "not a csr",
          agentVersion: "x",
        }),
      ),
    ).toBe("invalid_argument");
    agent.close();

    // The fleet is as it was.
    await e2e.connected(3);
    const { clusters: known } = await callUnary(e2e.admin, "listClusters", {
      pageSize: 100,
    });
    expect(known.map((c) => c.name)).toEqual(["sec-01", "sec-02", "sec-03"]);
  });
});
