// The Secret identity store against the local Kubernetes API server of @flotilla/testkit (no real
// API server exists on the development machines): round trip in one server-side apply, a missing
// Secret, corrupt keys, RBAC refusals, and a keeper registering into the Secret.
import { KubeConfig } from "@kubernetes/client-node";
import {
  createSecretIdentityStore,
  startIdentityKeepers,
  type AgentIdentity,
} from "@flotilla/agent/testing";
import { createManualClock } from "@flotilla/node/testing";
import { startKubeApiServer, type KubeApiServer } from "@flotilla/testkit";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, expect, test } from "vitest";
import { parseAgentConfig } from "../src/config/config.js";
import { FakeIdentityHub } from "./support/fake-identity-hub.js";
import { TestCa } from "./support/test-ca.js";

const NS = "flotilla";
const SECRET = "flotilla-agent-identity";
const TOKEN = "fbt_secret-store-token-value";
const logger = pino({ level: "silent" });

let api: KubeApiServer;
let kubeConfig: KubeConfig;
let ca: TestCa;

beforeAll(async () => {
  api = await startKubeApiServer();
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(api.kubeconfig({ namespace: NS }));
  api.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  ca = await TestCa.create();
});
afterAll(async () => {
  await api.close();
});
beforeEach(() => {
  if (api.object("Secret", NS, SECRET) !== undefined)
    api.remove("Secret", NS, SECRET);
});

const store = () =>
  createSecretIdentityStore({ kubeConfig }, { namespace: NS, name: SECRET });

const identity = (serial: string): AgentIdentity => ({
  clusterName: "c1",
  keyPem: `-----BEGIN PRIVATE KEY-----\n${serial}\n-----END PRIVATE KEY-----\n`,
  certificatePem: `cert ${serial}`,
  caPem: "ca",
  expiresAtMs: 1_700_000_000_000,
  nats: {
    servers: ["nats://n:4222"],
    bucket: "flotilla-intents",
    key: "c1",
    creds: `creds ${serial}`,
  },
});

const dataOf = (): Record<string, string> =>
  (api.object("Secret", NS, SECRET)?.data ?? {}) as Record<string, string>;

test("save writes the whole Opaque Secret in one server-side apply; load reads it back", async () => {
  await store().save(identity("one"));
  const secret = api.object("Secret", NS, SECRET);
  expect(secret?.type).toBe("Opaque");
  expect(Object.keys(dataOf()).sort()).toEqual([
    "ca.pem",
    "cert.pem",
    "identity.json",
    "key.pem",
    "nats.creds",
  ]);
  expect(await store().load()).toEqual(identity("one"));

  const before = api.requests().length;
  await store().save(identity("two"));
  const writes = api
    .requests()
    .slice(before)
    .filter((r) => r.verb !== "get" && r.verb !== "discovery");
  expect(writes).toHaveLength(1);
  expect(writes[0]?.verb).toBe("patch");
  expect(writes[0]?.query).toContain("fieldManager=flotilla-agent");
  expect(writes[0]?.query).toContain("force=true");
  expect(await store().load()).toEqual(identity("two"));
});

test("an identity without NATS credentials round-trips without them", async () => {
  const full = identity("plain");
  const plain: AgentIdentity = {
    clusterName: full.clusterName,
    keyPem: full.keyPem,
    certificatePem: full.certificatePem,
    caPem: full.caPem,
    expiresAtMs: full.expiresAtMs,
  };
  await store().save(plain);
  expect(await store().load()).toEqual(plain);
});

test("load of a missing Secret is undefined", async () => {
  expect(await store().load()).toBeUndefined();
});

test("a corrupt or missing key fails naming the Secret and the key", async () => {
  await store().save(identity("one"));
  api.edit("Secret", NS, SECRET, (o) => {
    (o.data as Record<string, string>)["identity.json"] =
      Buffer.from('{"clusterName":""}').toString("base64");
  });
  await expect(store().load()).rejects.toMatchObject({
    code: "failed_precondition",
    message: expect.stringMatching(
      /Secret flotilla\/flotilla-agent-identity: identity\.json: clusterName/,
    ) as unknown,
  });

  await store().save(identity("one"));
  api.edit("Secret", NS, SECRET, (o) => {
    delete (o.data as Record<string, string>)["key.pem"];
  });
  await expect(store().load()).rejects.toMatchObject({
    code: "failed_precondition",
    message: expect.stringContaining(
      'Secret flotilla/flotilla-agent-identity: key "key.pem" is missing',
    ) as unknown,
  });
});

test("403 fails with an error naming the Secret and the verb", async () => {
  api.forbid("get", "secrets");
  await expect(store().load()).rejects.toMatchObject({
    code: "permission_denied",
    message: expect.stringMatching(
      /^Cannot get Secret flotilla\/flotilla-agent-identity: forbidden/,
    ) as unknown,
  });
  api.forbid("patch", "secrets");
  await expect(store().save(identity("one"))).rejects.toMatchObject({
    code: "permission_denied",
    message: expect.stringMatching(
      /^Cannot patch \(server-side apply\) Secret flotilla\/flotilla-agent-identity: forbidden/,
    ) as unknown,
  });
  expect(api.object("Secret", NS, SECRET)).toBeUndefined();
  api.allow("get", "secrets");
  api.allow("patch", "secrets");
});

test("--kubernetes keeps the identity in a Secret unless --identity-dir is given", () => {
  const base = [
    ...["--tls-ca", "ca.pem", "--kubernetes", "in-cluster"],
    ...["--cluster-name", "c1"],
  ];
  const parse = (args: string[], env: Record<string, string> = {}) =>
    parseAgentConfig([...base, ...args], env);
  expect(parse([])).toMatchObject({
    type: "config",
    config: { identity: { secret: "flotilla-agent-identity" } },
  });
  expect(parse([], { FLOTILLA_IDENTITY_SECRET: "ids" })).toMatchObject({
    config: { identity: { secret: "ids" } },
  });
  expect(parse(["--identity-dir", "/ids"])).toMatchObject({
    config: { identity: { dir: "/ids" } },
  });
  expect(parse(["--identity-secret", "Bad_Name"])).toMatchObject({
    type: "invalid",
    problems: [expect.stringContaining('--identity-secret "Bad_Name"')],
  });
  expect(
    parse(["--identity-secret", "s", "--identity-dir", "/ids"]),
  ).toMatchObject({
    type: "invalid",
    problems: [expect.stringContaining("does not apply with --identity-dir")],
  });
});

test("a keeper registers into the Secret, without the token, and reuses it", async () => {
  await using hub = await FakeIdentityHub.start(ca);
  hub.addToken({ secret: TOKEN, maxUses: 1 });
  const options = {
    clusterNames: ["c1"],
    storeFor: () => store(),
    hub: hub.address,
    hubCa: Buffer.from(ca.pem),
    agentVersion: "0.0.0-test",
  };
  const clock = createManualClock(Date.now());
  const first = await startIdentityKeepers(
    { clock, logger },
    { ...options, bootstrapToken: TOKEN },
  );
  const certificate = first.get("c1")?.current().certificatePem;
  await Promise.all([...first.values()].map((k) => k.stop()));
  expect(hub.registrations).toHaveLength(1);
  const stored = await store().load();
  expect(stored?.clusterName).toBe("c1");
  expect(stored?.certificatePem).toBe(certificate);
  const decoded = Object.values(dataOf())
    .map((v) => Buffer.from(v, "base64").toString("utf8"))
    .join("\n");
  expect(decoded).toContain("BEGIN PRIVATE KEY");
  expect(decoded).not.toContain(TOKEN);
  expect(JSON.stringify(api.object("Secret", NS, SECRET))).not.toContain(TOKEN);

  // A restart without a token loads the Secret and does not register again.
  const second = await startIdentityKeepers({ clock, logger }, options);
  expect(second.get("c1")?.current().certificatePem).toBe(certificate);
  await Promise.all([...second.values()].map((k) => k.stop()));
  expect(hub.registrations).toHaveLength(1);
});
