// A cluster's NATS connect options from its identity: its own servers (else the configured ones),
// the credentials read afresh at every connect (so a renewal takes effect on the next reconnect),
// the cluster's inbox prefix, none without credentials, and a clear error when the hub's bucket or
// key is not the one the agent reads.
import { afterAll, beforeAll, expect, test } from "vitest";
import { pino } from "pino";
import {
  agentInboxPrefix,
  createIdentityKeeper,
  identityNatsOptions,
  type AgentIdentity,
  type IdentityKeeper,
  type IdentityStore,
} from "@flotilla/agent/testing";
import { createManualClock } from "@flotilla/node/testing";
import { TestCa } from "./support/test-ca.js";

let ca: TestCa;
let base: AgentIdentity;
const keepers: IdentityKeeper[] = [];

beforeAll(async () => {
  ca = await TestCa.create();
  const { keyPem, certificatePem } = await ca.cluster("c1", {
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3_600_000),
  });
  base = {
    clusterName: "c1",
    keyPem,
    certificatePem,
    caPem: ca.pem,
    expiresAtMs: Date.now() + 3_600_000,
  };
});
afterAll(async () => {
  await Promise.all(keepers.map((k) => k.stop()));
});

/** A keeper over an in-memory store holding `identity`. */
async function keeperWith(identity: AgentIdentity): Promise<IdentityKeeper> {
  const store: IdentityStore = {
    location: "memory",
    load: () => Promise.resolve(identity),
    save: () => Promise.resolve(),
  };
  const keeper = createIdentityKeeper(
    {
      store,
      clock: createManualClock(Date.now()),
      logger: pino({ level: "silent" }),
    },
    {
      clusterName: "c1",
      hub: "127.0.0.1:1",
      hubCa: Buffer.from(ca.pem),
      agentVersion: "0.0.0-test",
    },
  );
  keepers.push(keeper);
  await keeper.start();
  return keeper;
}

const CREDS = `-----BEGIN NATS USER JWT-----
eyJ0eXAiOiJKV1QifQ.e30.sig
------END NATS USER JWT------

-----BEGIN USER NKEY SEED-----
SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4
------END USER NKEY SEED------
`;

test("uses the identity's servers (every one), the cluster's inbox prefix and its credentials", async () => {
  const servers = [
    "nats://nats-0.example:4222",
    "nats://nats-1.example:4222",
    "nats://nats-2.example:4222",
  ];
  const keeper = await keeperWith({
    ...base,
    nats: {
      servers,
      creds: CREDS,
      bucket: "flotilla-intents",
      key: "c1",
    },
  });
  const options = identityNatsOptions(keeper, {
    servers: ["nats://configured:4222"],
    prefix: "flotilla",
  });
  expect(options?.servers).toEqual(servers);
  expect(options?.inboxPrefix).toBe(agentInboxPrefix("c1"));
  expect(typeof options?.authenticator).toBe("function");
});

test("falls back to the configured servers, and has no options without credentials", async () => {
  const keeper = await keeperWith({
    ...base,
    nats: { servers: [], creds: CREDS, bucket: "flotilla-intents", key: "c1" },
  });
  expect(
    identityNatsOptions(keeper, {
      servers: ["nats://configured:4222"],
      prefix: "flotilla",
    })?.servers,
  ).toEqual(["nats://configured:4222"]);
  const without = await keeperWith(base);
  expect(
    identityNatsOptions(without, { servers: [], prefix: "flotilla" }),
  ).toBeUndefined();
});

test("credentials for another bucket than --intents-prefix's are a clear error", async () => {
  const keeper = await keeperWith({
    ...base,
    nats: { servers: [], creds: CREDS, bucket: "other-intents", key: "c1" },
  });
  expect(() =>
    identityNatsOptions(keeper, { servers: [], prefix: "flotilla" }),
  ).toThrow(
    'Cannot read the intent of cluster "c1": the hub\'s NATS credentials are for bucket "other-intents" key "c1", the agent reads bucket "flotilla-intents" key "c1"; set --intents-prefix as the hub\'s',
  );
});
