/**
 * A NATS operator-mode setup for agent tests, standing in for the hub's `nats-setup` and its
 * credentials issuer (the agent package cannot import the hub, nor does it depend on
 * @nats-io/jwt): NATS JWTs are signed here with the nkeys nats.js itself ships. As the hub's setup
 * does, it puts the hub in the flotilla account, which exports `agentsAccountExports`, and agents
 * in an account of their own that imports them; agents' users get exactly `agentNatsPermissions`
 * of @flotilla/protocol, the set the hub grants.
 */
import { nkeys } from "@nats-io/transport-node";
import {
  agentNatsPermissions,
  agentsAccountExports,
  DEFAULT_INTENTS_PREFIX,
} from "@flotilla/protocol";
import { compact } from "@flotilla/core";

type KeyPair = ReturnType<typeof nkeys.createAccount>;

const UNLIMITED = -1;

function base64url(data: string | Uint8Array): string {
  return Buffer.from(data).toString("base64url");
}

function signJwt(
  issuer: KeyPair,
  subject: string,
  name: string,
  nats: Record<string, unknown>,
  expSeconds?: number,
): string {
  const header = base64url(JSON.stringify({ typ: "JWT", alg: "ed25519-nkey" }));
  const claims = {
    jti: base64url(crypto.getRandomValues(new Uint8Array(16))),
    iat: Math.floor(Date.now() / 1000),
    iss: issuer.getPublicKey(),
    name,
    sub: subject,
    ...compact({ exp: expSeconds }),
    nats: { ...nats, version: 2 },
  };
  const payload = `${header}.${base64url(JSON.stringify(claims))}`;
  const signature = issuer.sign(new TextEncoder().encode(payload));
  return `${payload}.${base64url(signature)}`;
}

function creds(jwt: string, user: KeyPair): string {
  return [
    "-----BEGIN NATS USER JWT-----",
    jwt,
    "------END NATS USER JWT------",
    "",
    "-----BEGIN USER NKEY SEED-----",
    new TextDecoder().decode(user.getSeed()),
    "------END USER NKEY SEED------",
    "",
  ].join("\n");
}

const connectionLimits = {
  subs: UNLIMITED,
  data: UNLIMITED,
  payload: UNLIMITED,
  imports: UNLIMITED,
  exports: UNLIMITED,
  wildcards: true,
  conn: UNLIMITED,
  leaf: UNLIMITED,
};

/** An operator, a system account, the flotilla account and the agents' account. */
export interface TestOperator {
  /** nats-server configuration (for startNatsServer's `config`). */
  readonly serverConfig: string;
  /** A user with every permission (the hub's role). */
  readonly hubCreds: string;
  /** Cluster `cluster`'s agent user, expiring at `expiresAtMs`, for intents prefix `prefix`. */
  agentCreds(cluster: string, expiresAtMs: number, prefix?: string): string;
}

/** Creates the operator setup, with exports and imports for each intents prefix of `prefixes`. */
export function createTestOperator(
  prefixes: readonly string[] = [DEFAULT_INTENTS_PREFIX],
): TestOperator {
  const operator = nkeys.createOperator();
  const system = nkeys.createAccount();
  const account = nkeys.createAccount();
  const signing = nkeys.createAccount();
  const agents = nkeys.createAccount();
  const agentsSigning = nkeys.createAccount();
  const accountPub = account.getPublicKey();
  const exported = prefixes.flatMap((p) => agentsAccountExports(p));
  const operatorJwt = signJwt(operator, operator.getPublicKey(), "op", {
    type: "operator",
    system_account: system.getPublicKey(),
  });
  const systemJwt = signJwt(operator, system.getPublicKey(), "SYS", {
    type: "account",
    limits: connectionLimits,
  });
  const accountJwt = signJwt(operator, accountPub, "flotilla", {
    type: "account",
    signing_keys: [signing.getPublicKey()],
    limits: {
      ...connectionLimits,
      mem_storage: UNLIMITED,
      disk_storage: UNLIMITED,
      streams: UNLIMITED,
      consumer: UNLIMITED,
    },
    exports: exported.map((e) => ({
      name: e.name,
      subject: e.subject,
      type: e.type,
      ...(e.type === "service" ? { response_type: "Singleton" } : {}),
    })),
  });
  const agentsJwt = signJwt(operator, agents.getPublicKey(), "agents", {
    type: "account",
    signing_keys: [agentsSigning.getPublicKey()],
    limits: connectionLimits,
    imports: exported.map((e) => ({
      name: e.name,
      subject: e.subject,
      account: accountPub,
      type: e.type,
    })),
  });
  const user = (
    name: string,
    permissions: Record<string, unknown>,
    expiresAtMs?: number,
    inAgents = false,
  ): string => {
    const kp = nkeys.createUser();
    const jwt = signJwt(
      inAgents ? agentsSigning : signing,
      kp.getPublicKey(),
      name,
      {
        type: "user",
        issuer_account: inAgents ? agents.getPublicKey() : accountPub,
        subs: UNLIMITED,
        data: UNLIMITED,
        payload: UNLIMITED,
        ...permissions,
      },
      expiresAtMs === undefined ? undefined : Math.floor(expiresAtMs / 1000),
    );
    return creds(jwt, kp);
  };
  return {
    serverConfig: [
      `operator: ${JSON.stringify(operatorJwt)}`,
      `system_account: ${JSON.stringify(system.getPublicKey())}`,
      "resolver: MEMORY",
      "resolver_preload: {",
      `  ${JSON.stringify(system.getPublicKey())}: ${JSON.stringify(systemJwt)}`,
      `  ${JSON.stringify(accountPub)}: ${JSON.stringify(accountJwt)}`,
      `  ${JSON.stringify(agents.getPublicKey())}: ${JSON.stringify(agentsJwt)}`,
      "}",
    ].join("\n"),
    hubCreds: user("hub", {}),
    agentCreds: (cluster, expiresAtMs, prefix) => {
      const p = agentNatsPermissions(cluster, prefix);
      return user(
        `cluster:${cluster}`,
        { pub: { allow: [...p.publish] }, sub: { allow: [...p.subscribe] } },
        expiresAtMs,
        true,
      );
    },
  };
}
