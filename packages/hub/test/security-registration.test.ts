/**
 * Agent registration, mTLS sessions and rotation over real gRPC with TLS: tokens that
 * are valid, expired, revoked, used up, bound to another cluster or malformed; CSRs that do not
 * verify; a stream whose certificate names another cluster, or none; a removed cluster; renewal.
 */
import { callUnary, PROTOCOL_VERSION, type wire } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { describe, expect, it } from "vitest";
import { BOOTSTRAP_TOKENS } from "../src/security/bootstrap-tokens.js";
import { createAccount, decode } from "@nats-io/jwt";
import { FlotillaError } from "@flotilla/core";
import { createAgentNatsCredentialsIssuer } from "../src/security/agent-nats-issuer.js";
import {
  IDENTITIES,
  type NatsUserRevoker,
} from "../src/security/cluster-identities.js";
import { newKeyAndCsr, tamperedCsr } from "./security-keys.js";
import { startSecureTestHub, type SecureTestHub } from "./security-harness.js";

const HOUR_S = 3_600;

async function createToken(
  t: SecureTestHub,
  request: wire.CreateBootstrapTokenRequest = {},
): Promise<{ id: string; secret: string }> {
  const response = await callUnary(t.admin, "createBootstrapToken", {
    ttlSeconds: HOUR_S,
    ...request,
  });
  return { id: response.token?.id ?? "", secret: response.secret };
}

async function register(
  t: SecureTestHub,
  secret: string,
  clusterName: string,
  csrPem?: string,
) {
  const key = await newKeyAndCsr();
  const response = await callUnary(t.agentClient(), "register", {
    bootstrapToken: secret,
    clusterName,
    csrPem: csrPem ?? key.csrPem,
    agentVersion: "test",
  });
  return {
    keyPem: key.keyPem,
    certificatePem: response.identity?.clientCertificatePem ?? "",
    response,
  };
}

/** A Connect stream: its welcome (cluster name) and its end (gRPC code) as they arrive. */
interface Session {
  welcome?: string;
  code?: number;
  details?: string;
  close(): void;
}

/** Opens Connect with `identity`, says hello as `cluster`; resolves at the welcome or the error. */
async function connect(
  t: SecureTestHub,
  identity: { keyPem: string; certificatePem: string } | undefined,
  cluster: string,
): Promise<Session> {
  const client = t.agentClient(identity);
  const call = client.Connect();
  const session: Session = {
    close: () => {
      call.end();
    },
  };
  call.on("data", (message: wire.HubMessage__Output) => {
    if (message.welcome) session.welcome = message.welcome.clusterName;
  });
  call.on("error", (error: { code: number; details: string }) => {
    session.code = error.code;
    session.details = error.details;
  });
  call.write({
    hello: {
      clusterName: cluster,
      agentVersion: "test",
      protocolVersion: PROTOCOL_VERSION,
      lastAppliedGeneration: 0,
    },
  });
  await waitFor(() => session.welcome ?? session.code, {
    timeoutMs: 10_000,
    message: "a welcome or an error",
  });
  return session;
}

async function tokenUses(t: SecureTestHub, id: string): Promise<number> {
  return (await t.store.get(BOOTSTRAP_TOKENS, id))?.value.uses ?? -1;
}

describe("agent registration", () => {
  it("registers with a valid token: a certificate for the cluster, the CA, no NATS credentials, an audit record", async () => {
    await using t = await startSecureTestHub();
    const token = await createToken(t);
    const { response } = await register(t, token.secret, "web-1");
    expect(response.clusterName).toBe("web-1");
    expect(response.identity?.caCertificatePem).toBe(
      t.authority.certificatePem,
    );
    expect(response.identity?.nats).toBeNull();
    expect(await tokenUses(t, token.id)).toBe(1);
    expect(
      (await t.store.get(IDENTITIES, "web-1"))?.value.certificates,
    ).toHaveLength(1);
    const cluster = await callUnary(t.admin, "getCluster", { name: "web-1" });
    expect(cluster.cluster?.connection).toBe(
      "CONNECTION_STATE_NEVER_CONNECTED",
    );
    const audit = await t.audit.list({
      method: "/flotilla.v1.AgentService/Register",
    });
    expect(audit.events).toMatchObject([
      {
        actor: "cluster:web-1",
        targetKind: "Cluster",
        targetName: "web-1",
        outcome: "Succeeded",
      },
    ]);
  });

  it.each([
    ["expired", "unauthenticated"],
    ["revoked", "unauthenticated"],
    ["used up", "unauthenticated"],
    ["bound to another cluster", "permission_denied"],
    ["malformed", "invalid_argument"],
    ["of a wrong secret", "unauthenticated"],
  ])("refuses a token that is %s, and stores nothing", async (kind, code) => {
    await using t = await startSecureTestHub();
    const token = await createToken(
      t,
      kind === "bound to another cluster" ? { clusterName: "web-2" } : {},
    );
    let secret = token.secret;
    if (kind === "expired") t.clock.advance(HOUR_S * 1000 + 1);
    if (kind === "revoked")
      await callUnary(t.admin, "revokeBootstrapToken", { id: token.id });
    if (kind === "used up") await register(t, secret, "web-0");
    if (kind === "malformed") secret = "flotilla-bt.nonsense";
    if (kind === "of a wrong secret") secret = `${secret.slice(0, -4)}AAAA`;
    const usesBefore = await tokenUses(t, token.id);
    const error = await register(t, secret, "web-1").catch((e: unknown) => e);
    expect(error).toMatchObject({ code });
    expect((error as Error).message).not.toContain(token.secret.split(".")[2]);
    expect(await t.store.get(IDENTITIES, "web-1")).toBeUndefined();
    expect(await tokenUses(t, token.id)).toBe(usesBefore);
    // The caller proved nothing: the record names its address, the name it claimed is the target.
    const { events } = await t.audit.list({
      method: "/flotilla.v1.AgentService/Register",
      targetName: "web-1",
    });
    expect(events).toMatchObject([
      {
        actor: expect.stringMatching(/^anonymous@127\.0\.0\.1:\d+$/),
        role: "",
        targetKind: "Cluster",
        targetName: "web-1",
        outcome: code === "invalid_argument" ? "Failed" : "Denied",
        errorCode: code,
      },
    ]);
  });

  it("refuses a CSR whose signature does not verify and a bad cluster name, counting no use", async () => {
    await using t = await startSecureTestHub();
    const token = await createToken(t);
    const { csrPem } = await newKeyAndCsr();
    await expect(
      register(t, token.secret, "web-1", tamperedCsr(csrPem)),
    ).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(register(t, token.secret, "Web_1")).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [expect.objectContaining({ path: "clusterName" })],
    });
    expect(await tokenUses(t, token.id)).toBe(0);
    expect(await t.store.list(IDENTITIES)).toEqual([]);
  });

  it("lets concurrent registrations use a token no more than its max uses", async () => {
    await using t = await startSecureTestHub();
    const token = await createToken(t, { maxUses: 2 });
    const results = await Promise.allSettled(
      ["a-1", "a-2", "a-3", "a-4", "a-5"].map((name) =>
        register(t, token.secret, name),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
    expect(await tokenUses(t, token.id)).toBe(2);
  });

  it("needs a token bound to the name to register a cluster again, which revokes its old certificate", async () => {
    await using t = await startSecureTestHub();
    const first = await register(t, (await createToken(t)).secret, "web-1");
    await expect(
      register(t, (await createToken(t)).secret, "web-1"),
    ).rejects.toMatchObject({ code: "already_exists" });
    const again = await register(
      t,
      (await createToken(t, { clusterName: "web-1" })).secret,
      "web-1",
    );
    const old = await connect(t, first, "web-1");
    expect(old.code).toBe(16); // UNAUTHENTICATED
    const current = await connect(t, again, "web-1");
    expect(current.welcome).toBe("web-1");
    current.close();
  });
});

describe("agent sessions with mTLS", () => {
  it("welcomes the cluster its certificate names and refuses a hello for another cluster, audited as Denied", async () => {
    await using t = await startSecureTestHub();
    const a = await register(t, (await createToken(t)).secret, "cluster-a");
    const impostor = await connect(t, a, "cluster-b");
    expect(impostor.code).toBe(7); // PERMISSION_DENIED
    const denied = await t.audit.list({
      method: "/flotilla.v1.AgentService/Connect",
    });
    expect(denied.events).toMatchObject([
      {
        actor: "cluster:cluster-a",
        targetName: "cluster-b",
        outcome: "Denied",
      },
    ]);
    const session = await connect(t, a, "cluster-a");
    expect(session.welcome).toBe("cluster-a");
    session.close();
  });

  it("shows a registered cluster whose agent never connected as NeverConnected, past the heartbeat timeout and across a hub restart", async () => {
    await using t = await startSecureTestHub();
    const a = await register(t, (await createToken(t)).secret, "cluster-a");
    const shown = async () => {
      const { cluster } = await callUnary(t.admin, "getCluster", {
        name: "cluster-a",
      });
      return [cluster?.connection, cluster?.lastSeenAtMs];
    };
    // Three missed heartbeats of the harness's 60 s, the clock moved 20 s at a time: at most one
    // move between two of the hub's checks (every 50 ms), so that no check looks like a stall of
    // the hub itself (heartbeat-stalls.ts), which would forgive the silence.
    const silence = async () => {
      await waitFor(
        () => {
          t.clock.advance(20_000);
          return t.hub.registry.isUnreachable("cluster-a") || undefined;
        },
        {
          timeoutMs: 20_000,
          intervalMs: 150,
          message: "the hub to count cluster-a's agent away",
        },
      );
    };
    const never = ["CONNECTION_STATE_NEVER_CONNECTED", undefined];
    expect(await shown()).toEqual(never);
    await silence();
    expect(await shown()).toEqual(never);
    await t.restart();
    expect(await shown()).toEqual(never);
    await silence();
    expect(await shown()).toEqual(never);

    // Once its agent has connected, it is Connected, then Disconnected and Unreachable as before,
    // and a restart does not make it NeverConnected again.
    const session = await connect(t, a, "cluster-a");
    expect(session.welcome).toBe("cluster-a");
    expect((await shown())[0]).toBe("CONNECTION_STATE_CONNECTED");
    session.close();
    await waitFor(() => t.hub.registry.connectedCount() === 0 || undefined, {
      timeoutMs: 10_000,
      message: "the session to close",
    });
    expect((await shown())[0]).toBe("CONNECTION_STATE_DISCONNECTED");
    await silence();
    expect((await shown())[0]).toBe("CONNECTION_STATE_UNREACHABLE");
    await t.restart();
    expect((await shown())[0]).toBe("CONNECTION_STATE_DISCONNECTED");
  });

  it("refuses a stream without a client certificate", async () => {
    await using t = await startSecureTestHub();
    await register(t, (await createToken(t)).secret, "cluster-a");
    const anonymous = await connect(t, undefined, "cluster-a");
    expect(anonymous.code).toBe(16);
    expect(anonymous.welcome).toBeUndefined();
  });

  it("ends a removed cluster's stream and refuses it from then on", async () => {
    await using t = await startSecureTestHub();
    const a = await register(t, (await createToken(t)).secret, "cluster-a");
    const session = await connect(t, a, "cluster-a");
    expect(session.welcome).toBe("cluster-a");
    await callUnary(t.admin, "removeCluster", { name: "cluster-a" });
    await waitFor(() => session.code, {
      timeoutMs: 10_000,
      message: "the stream to end",
    });
    const back = await connect(t, a, "cluster-a");
    expect(back.code).toBe(16);
    await expect(
      callUnary(t.agentClient(a), "renewIdentity", {
        csrPem: (await newKeyAndCsr()).csrPem,
      }),
    ).rejects.toMatchObject({ code: "unauthenticated" });
  });

  it("renews a certificate: old and new both work until the old one expires", async () => {
    // The clock starts 40 minutes back, so that every certificate issued here is valid in real
    // time too when TLS presents it.
    await using t = await startSecureTestHub({
      clusterCertificateTtlMs: 3_600_000,
      clockOffsetMs: -40 * 60_000,
    });
    const old = await register(t, (await createToken(t)).secret, "cluster-a");
    t.clock.advance(30 * 60_000);
    const key = await newKeyAndCsr();
    const renewed = await callUnary(t.agentClient(old), "renewIdentity", {
      csrPem: key.csrPem,
    });
    const fresh = {
      keyPem: key.keyPem,
      certificatePem: renewed.identity?.clientCertificatePem ?? "",
    };
    expect(fresh.certificatePem).not.toBe(old.certificatePem);
    for (const identity of [old, fresh]) {
      const session = await connect(t, identity, "cluster-a");
      expect(session).toMatchObject({ welcome: "cluster-a" });
      session.close();
      await waitFor(() => t.hub.registry.connectedCount() === 0 || undefined, {
        timeoutMs: 10_000,
        message: "the session to close",
      });
    }
    t.clock.advance(31 * 60_000);
    expect((await connect(t, old, "cluster-a")).code).toBe(16);
    const still = await connect(t, fresh, "cluster-a");
    expect(still.welcome).toBe("cluster-a");
    still.close();
  });
});

describe("a cluster's NATS users", () => {
  /** Mints real agent users (with a throwaway signing key) and records what is revoked. */
  function natsFixture() {
    const revoked: string[] = [];
    let failing = false;
    const natsCredentials = createAgentNatsCredentialsIssuer({
      signingKeySeed: new TextDecoder().decode(createAccount().getSeed()),
      accountPublicKey: createAccount().getPublicKey(),
      servers: ["nats://127.0.0.1:4222"],
    });
    const natsUsers: NatsUserRevoker = {
      revoke(users) {
        if (failing) {
          return Promise.reject(
            new FlotillaError(
              "unavailable",
              "the revocations cannot be stored",
            ),
          );
        }
        revoked.push(...users.map((u) => u.publicKey));
        return Promise.resolve();
      },
    };
    return {
      nats: { natsCredentials, natsUsers },
      revoked,
      fail: (value: boolean) => {
        failing = value;
      },
    };
  }

  /** The public key of the user in a registration's NATS credentials. */
  function userOf(response: wire.RegisterResponse__Output): string {
    const creds = response.identity?.nats?.creds ?? "";
    const jwt = /-----BEGIN NATS USER JWT-----\s*(\S+)/.exec(creds)?.[1] ?? "";
    return decode(jwt).sub;
  }

  it("are revoked when the cluster is removed, before anything else is", async () => {
    const fx = natsFixture();
    await using t = await startSecureTestHub({ nats: fx.nats });
    const a = await register(t, (await createToken(t)).secret, "cluster-a");
    expect(fx.revoked).toEqual([]);
    await callUnary(t.admin, "removeCluster", { name: "cluster-a" });
    expect(fx.revoked).toEqual([userOf(a.response)]);
  });

  it("a removal whose revocation cannot be stored fails and removes nothing; asked again, it goes through", async () => {
    const fx = natsFixture();
    await using t = await startSecureTestHub({ nats: fx.nats });
    const a = await register(t, (await createToken(t)).secret, "cluster-a");
    fx.fail(true);
    await expect(
      callUnary(t.admin, "removeCluster", { name: "cluster-a" }),
    ).rejects.toMatchObject({ code: "unavailable" });
    // Still listed, its identity stored, its certificate still honoured.
    expect(
      (await callUnary(t.admin, "getCluster", { name: "cluster-a" })).cluster
        ?.name,
    ).toBe("cluster-a");
    expect(await t.store.get(IDENTITIES, "cluster-a")).toBeDefined();
    const session = await connect(t, a, "cluster-a");
    expect(session.welcome).toBe("cluster-a");
    session.close();

    fx.fail(false);
    await callUnary(t.admin, "removeCluster", { name: "cluster-a" });
    expect(fx.revoked).toEqual([userOf(a.response)]);
    expect(await t.store.get(IDENTITIES, "cluster-a")).toBeUndefined();
  });

  it("of the replaced certificate are revoked when the cluster registers again", async () => {
    const fx = natsFixture();
    await using t = await startSecureTestHub({ nats: fx.nats });
    const first = await register(t, (await createToken(t)).secret, "web-1");
    const again = await register(
      t,
      (await createToken(t, { clusterName: "web-1" })).secret,
      "web-1",
    );
    expect(fx.revoked).toEqual([userOf(first.response)]);
    expect(userOf(again.response)).not.toBe(userOf(first.response));
  });
});
