/**
 * `flotilla-hub nats-setup --from DIR` against a real nats-server: from the single-account setup
 * an earlier version wrote (agents' users in the hub's account, a memory resolver), and from a
 * setup of this version. The hub's JetStream data is found again with the new credentials, and
 * every credential of the old setup is refused.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import {
  createAccount,
  createOperator,
  createUser,
  encodeAccount,
  encodeOperator,
  encodeUser,
  fmtCreds,
} from "@nats-io/jwt";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, credsAuthenticator } from "@nats-io/transport-node";
import { runNatsSetup } from "@flotilla/hub";
import { unlimitedConnections } from "@flotilla/hub/testing";
import { startNatsServer, type NatsServer } from "@flotilla/testkit";

const te = new TextEncoder();
const td = new TextDecoder();
const cleanup: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function startServer(config: string): Promise<NatsServer> {
  const server = await startNatsServer({ config });
  cleanup.push(() => server.stop());
  return server;
}

/** Connects with `creds`; resolves with the error's text when refused. */
async function tryConnect(server: NatsServer, creds: string) {
  try {
    const nc = await connect({
      servers: server.url,
      authenticator: credsAuthenticator(te.encode(creds)),
      reconnect: false,
    });
    cleanup.push(() => nc.close());
    return nc;
  } catch (error) {
    return String(error);
  }
}

const unlimited = unlimitedConnections();

/** The files the single-account setup of an earlier version wrote into `dir`. */
async function writeLegacySetup(
  dir: string,
): Promise<{ hubCreds: string; agentCreds: string }> {
  const operator = createOperator();
  const system = createAccount();
  const account = createAccount();
  const signing = createAccount();
  const operatorJwt = await encodeOperator("flotilla-operator", operator, {
    system_account: system.getPublicKey(),
  });
  const systemJwt = await encodeAccount(
    "SYS",
    system,
    { limits: unlimited },
    { signer: operator },
  );
  const accountJwt = await encodeAccount(
    "flotilla",
    account,
    {
      limits: {
        ...unlimited,
        mem_storage: -1,
        disk_storage: -1,
        streams: -1,
        consumer: -1,
      },
      signing_keys: [signing.getPublicKey()],
    },
    { signer: operator },
  );
  const user = async (name: string) => {
    const kp = createUser();
    const jwt = await encodeUser(name, kp, account, {}, { signer: signing });
    return td.decode(fmtCreds(jwt, kp));
  };
  const hubCreds = await user("flotilla-hub");
  const agentCreds = await user("cluster:edge-1");
  const conf = [
    `operator: ${JSON.stringify(operatorJwt)}`,
    `system_account: ${JSON.stringify(system.getPublicKey())}`,
    "resolver: MEMORY",
    "resolver_preload: {",
    `  ${JSON.stringify(system.getPublicKey())}: ${JSON.stringify(systemJwt)}`,
    `  ${JSON.stringify(account.getPublicKey())}: ${JSON.stringify(accountJwt)}`,
    "}",
    "",
  ].join("\n");
  await writeFile(join(dir, "nats-auth.conf"), conf);
  await writeFile(join(dir, "hub.creds"), hubCreds);
  await writeFile(
    join(dir, "account-signing.nk"),
    td.decode(signing.getSeed()),
  );
  await writeFile(join(dir, "operator.nk"), td.decode(operator.getSeed()));
  return { hubCreds, agentCreds };
}

describe("nats-setup --from", () => {
  test("upgrades the single-account setup: the hub's data is there, the old users are refused", async () => {
    const legacy = await tempDir("flotilla-legacy-");
    const { hubCreds, agentCreds } = await writeLegacySetup(legacy);
    const server = await startServer(
      await readFile(join(legacy, "nats-auth.conf"), "utf8"),
    );
    const oldHub = await tryConnect(server, hubCreds);
    if (typeof oldHub === "string") throw new Error(oldHub);
    const kv = await new Kvm(jetstream(oldHub)).create("flotilla-runs");
    await kv.put("up-1", "the hub's state");
    await oldHub.close();

    const next = await tempDir("flotilla-next-");
    await runNatsSetup({
      outDir: next,
      fromDir: legacy,
      resolverDir: join(next, "jwt"),
      force: false,
    });
    await server.restart({
      config: await readFile(join(next, "nats-auth.conf"), "utf8"),
    });

    const hub = await tryConnect(
      server,
      await readFile(join(next, "hub.creds"), "utf8"),
    );
    if (typeof hub === "string") throw new Error(hub);
    const runs = await new Kvm(jetstream(hub)).open("flotilla-runs");
    expect(td.decode((await runs.get("up-1"))?.value)).toBe("the hub's state");
    expect(await tryConnect(server, hubCreds)).toMatch(
      /Authorization Violation/,
    );
    // An agent's user of the old setup could read the whole account: it is refused now.
    expect(await tryConnect(server, agentCreds)).toMatch(
      /Authorization Violation/,
    );
  });

  test("rotates a setup of this version, keeping its accounts, and refuses its users", async () => {
    const first = await tempDir("flotilla-first-");
    await runNatsSetup({
      outDir: first,
      resolverDir: join(first, "jwt"),
      force: false,
    });
    const server = await startServer(
      await readFile(join(first, "nats-auth.conf"), "utf8"),
    );
    const oldCreds = await readFile(join(first, "hub.creds"), "utf8");
    const firstHub = await tryConnect(server, oldCreds);
    if (typeof firstHub === "string") throw new Error(firstHub);
    await (
      await new Kvm(jetstream(firstHub)).create("flotilla-runs")
    ).put("up-1", "kept");
    await firstHub.close();
    const firstConf = await readFile(join(first, "nats-auth.conf"), "utf8");

    const second = await tempDir("flotilla-second-");
    await runNatsSetup({
      outDir: second,
      fromDir: first,
      resolverDir: join(first, "jwt"),
      force: false,
    });
    const secondConf = await readFile(join(second, "nats-auth.conf"), "utf8");
    // The same operator and the same accounts (by public key), newly signed.
    const keys = (conf: string) =>
      [...conf.matchAll(/^ {2}"(A[A-Z2-7]{55})":/gm)].map((m) => m[1]);
    expect(keys(secondConf).slice(1)).toEqual(keys(firstConf).slice(1));
    await server.restart({ config: secondConf });
    const hub = await tryConnect(
      server,
      await readFile(join(second, "hub.creds"), "utf8"),
    );
    if (typeof hub === "string") throw new Error(hub);
    const runs = await new Kvm(jetstream(hub)).open("flotilla-runs");
    expect(td.decode((await runs.get("up-1"))?.value)).toBe("kept");
    expect(await tryConnect(server, oldCreds)).toMatch(
      /Authorization Violation/,
    );
  });

  test("refuses an operator seed that is not the setup's operator, naming the files", async () => {
    const dir = await tempDir("flotilla-mixed-");
    await writeLegacySetup(dir);
    await writeFile(
      join(dir, "operator.nk"),
      td.decode(createOperator().getSeed()),
    );
    await expect(
      runNatsSetup({
        outDir: await tempDir("flotilla-out-"),
        fromDir: dir,
        force: false,
      }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      message: expect.stringMatching(
        /operator\.nk is the seed of operator O[A-Z2-7]+, but .*nats-auth\.conf trusts/,
      ) as unknown,
    });
  });
});
