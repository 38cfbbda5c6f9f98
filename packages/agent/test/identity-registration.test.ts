// Registration and renewal against a fake AgentService over TLS (support/fake-identity-hub.ts):
// the bootstrap token is exchanged once and never stored, refusals end with the hub's reason, an
// unreachable hub is retried, a stored identity is reused (or refused when it is another
// cluster's), and renewal at 2/3 of the lifetime presents the old certificate, stores the new one
// and moves the hub session onto it.
import { X509Certificate } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { pino } from "pino";
import {
  certificateValidity,
  createFileIdentityStore,
  createHubSession,
  createIdentityKeeper,
  startIdentityKeepers,
  type IdentityKeeper,
  type IdentityKeeperOptions,
} from "@flotilla/agent/testing";
import { createManualClock, type ManualClock } from "@flotilla/node/testing";
import { waitFor } from "@flotilla/testkit";
import { FakeIdentityHub } from "./support/fake-identity-hub.js";
import { TestCa } from "./support/test-ca.js";

const TOKEN = "fbt_s3cr3t-token-value";
const logger = pino({ level: "silent" });
let root: string;
let ca: TestCa;
let cases = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "flotilla-identity-reg-"));
  ca = await TestCa.create();
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function newDir(): string {
  return join(root, `case-${String(++cases)}`);
}

function keeper(
  hub: FakeIdentityHub,
  dir: string,
  clock: ManualClock,
  options: Partial<IdentityKeeperOptions> = {},
): IdentityKeeper {
  return createIdentityKeeper(
    { store: createFileIdentityStore(dir), clock, random: () => 0.5, logger },
    {
      clusterName: "c1",
      hub: hub.address,
      hubCa: Buffer.from(ca.pem),
      agentVersion: "0.0.0-test",
      callTimeoutMs: 5_000,
      ...options,
    },
  );
}

/** Every stored file's content, to look for the token. */
async function storedText(dir: string): Promise<string> {
  const parts: string[] = [];
  for (const entry of await readdir(dir, {
    recursive: true,
    withFileTypes: true,
  }))
    if (entry.isFile())
      parts.push(await readFile(join(entry.parentPath, entry.name), "utf8"));
  return parts.join("\n");
}

test("registers with a token, stores the identity without the token, and reuses it later", async () => {
  await using hub = await FakeIdentityHub.start(ca);
  hub.addToken({ secret: TOKEN, maxUses: 1 });
  const dir = newDir();
  const clock = createManualClock(Date.now());
  await using first = keeper(hub, dir, clock, { bootstrapToken: TOKEN });
  await first.start();

  expect(hub.registrations).toHaveLength(1);
  expect(hub.registrations[0]).toMatchObject({
    clusterName: "c1",
    bootstrapToken: TOKEN,
  });
  expect(hub.registrations[0]?.csrPem).toContain("BEGIN CERTIFICATE REQUEST");
  const stored = await createFileIdentityStore(dir).load();
  expect(stored?.certificatePem).toBe(first.current().certificatePem);
  expect(stored?.keyPem).toContain("BEGIN PRIVATE KEY");
  expect(await storedText(dir)).not.toContain(TOKEN);
  await first.stop();

  // A restart without a token uses what is stored and does not register again.
  await using second = keeper(hub, dir, clock);
  await second.start();
  expect(second.current().certificatePem).toBe(stored?.certificatePem);
  expect(hub.registrations).toHaveLength(1);
});

test("a refused token ends registration with the hub's reason and stores nothing", async () => {
  await using hub = await FakeIdentityHub.start(ca);
  hub.addToken({ secret: TOKEN, maxUses: 1, cluster: "other" });
  const dir = newDir();
  const clock = createManualClock(Date.now());
  await using bound = keeper(hub, dir, clock, { bootstrapToken: TOKEN });
  await expect(bound.start()).rejects.toMatchObject({
    code: "permission_denied",
    message: expect.stringContaining(
      'Cannot register cluster "c1" with the hub',
    ) as unknown,
  });
  await using unknown = keeper(hub, dir, clock, {
    bootstrapToken: "fbt_wrong",
  });
  await expect(unknown.start()).rejects.toMatchObject({
    code: "unauthenticated",
  });
  expect(await createFileIdentityStore(dir).load()).toBeUndefined();

  await using none = keeper(hub, dir, clock);
  await expect(none.start()).rejects.toThrow("no valid identity is stored in");
});

test("an unreachable hub is retried with backoff until registration succeeds", async () => {
  const hub = await FakeIdentityHub.start(ca);
  hub.addToken({ secret: TOKEN, maxUses: 1 });
  const port = hub.port;
  hub.shutdown();
  const clock = createManualClock(Date.now());
  const dir = newDir();
  await using k = createIdentityKeeper(
    { store: createFileIdentityStore(dir), clock, random: () => 0.5, logger },
    {
      clusterName: "c1",
      hub: `127.0.0.1:${String(port)}`,
      hubCa: Buffer.from(ca.pem),
      agentVersion: "0.0.0-test",
      bootstrapToken: TOKEN,
      callTimeoutMs: 5_000,
    },
  );
  const starting = k.start();
  await waitFor(() => clock.pending() > 0, { timeoutMs: 10_000 });
  await hub.listen(port);
  try {
    await clock.advance(1_000);
    await starting;
  } finally {
    hub.shutdown();
  }
  expect(hub.registrations).toHaveLength(1);
  expect(k.current().clusterName).toBe("c1");
});

test("with several hub addresses, a registration that cannot reach one is retried on the next", async () => {
  const down = await FakeIdentityHub.start(ca);
  down.shutdown();
  await using up = await FakeIdentityHub.start(ca);
  up.addToken({ secret: TOKEN, maxUses: 1 });
  const clock = createManualClock(Date.now());
  // The draw 0.99 keeps a list of two in the order given: the unreachable address is tried first.
  await using k = createIdentityKeeper(
    {
      store: createFileIdentityStore(newDir()),
      clock,
      random: () => 0.99,
      logger,
    },
    {
      clusterName: "c1",
      hub: [down.address, up.address],
      hubCa: Buffer.from(ca.pem),
      agentVersion: "0.0.0-test",
      bootstrapToken: TOKEN,
      callTimeoutMs: 5_000,
    },
  );
  const starting = k.start();
  await waitFor(() => clock.pending() > 0, { timeoutMs: 10_000 });
  expect(up.registrations).toHaveLength(0);
  await clock.advance(1_490); // 1 s ±50%, at the draw 0.99
  await starting;
  expect(up.registrations).toHaveLength(1);
  expect(down.registrations).toHaveLength(0);
  expect(k.current().clusterName).toBe("c1");
});

test("an identity stored for another cluster is a clear error", async () => {
  await using hub = await FakeIdentityHub.start(ca);
  hub.addToken({ secret: TOKEN, maxUses: 1 });
  const dir = newDir();
  const clock = createManualClock(Date.now());
  await using c1 = keeper(hub, dir, clock, { bootstrapToken: TOKEN });
  await c1.start();
  await c1.stop();
  await using c2 = keeper(hub, dir, clock, { clusterName: "c2" });
  await expect(c2.start()).rejects.toMatchObject({
    code: "failed_precondition",
    message: `Cannot use the identity of cluster "c2" from ${dir}: it belongs to cluster "c1"`,
  });
});

test("a fleet registers every cluster with one token into a directory each", async () => {
  await using hub = await FakeIdentityHub.start(ca);
  hub.addToken({ secret: TOKEN, maxUses: 3 });
  const dir = newDir();
  const keepers = await startIdentityKeepers(
    { clock: createManualClock(Date.now()), logger },
    {
      clusterNames: ["a", "b", "c"],
      dir,
      hub: hub.address,
      hubCa: Buffer.from(ca.pem),
      agentVersion: "0.0.0-test",
      bootstrapToken: TOKEN,
    },
  );
  try {
    expect([...keepers.keys()].sort()).toEqual(["a", "b", "c"]);
    for (const name of ["a", "b", "c"])
      expect(
        (await createFileIdentityStore(join(dir, name)).load())?.clusterName,
      ).toBe(name);
    expect(hub.tokens.get(TOKEN)?.uses).toBe(3);
  } finally {
    await Promise.all([...keepers.values()].map((k) => k.stop()));
  }
});

test("renews at 2/3 of the lifetime with the old certificate; the session reconnects with the new one", async () => {
  // Like the real hub, notBefore is backdated for clock skew (here by 10 minutes, for an hour).
  await using hub = await FakeIdentityHub.start(ca, {
    failRenewals: 1,
    validity: () => ({
      notBefore: new Date(Date.now() - 600_000),
      notAfter: new Date(Date.now() + 3_600_000),
    }),
  });
  hub.addToken({ secret: TOKEN, maxUses: 1 });
  const dir = newDir();
  const clock = createManualClock(Date.now());
  await using k = keeper(hub, dir, clock, {
    bootstrapToken: TOKEN,
    renewBackoff: { initialMs: 5_000, jitter: 0 },
  });
  const registeredAtMs = clock.now();
  await k.start();
  const old = k.current();
  const oldSerial = serialOf(old.certificatePem);
  // 2/3 of the lifetime counted from when the agent got it, not from the backdated notBefore.
  const { notAfterMs } = certificateValidity(old.certificatePem);
  const renewAt = Math.round(
    registeredAtMs + ((notAfterMs - registeredAtMs) * 2) / 3,
  );
  expect(k.nextRenewalAtMs()).toBe(renewAt);

  await using session = createHubSession(
    { clock, random: () => 0.5, logger },
    {
      clusterName: "c1",
      agentVersion: "0.0.0-test",
      hub: hub.address,
      transport: { tls: () => k.hubTls() },
      lastAppliedGeneration: () => 0,
      facts: () => Promise.resolve({ labels: {}, nodePools: [] }),
    },
  );
  k.onRenewed(() => {
    session.reconnect("identity renewed");
  });
  session.start();
  await waitFor(() => session.state === "connected");
  expect(hub.streams.at(-1)?.peer).toEqual({
    serial: oldSerial,
    cluster: "c1",
  });

  // Not yet: a second before the renewal is due.
  await clock.advance(renewAt - clock.now() - 1_000);
  expect(hub.renewals).toHaveLength(0);

  // The first attempt fails and is retried; the working identity stays.
  await clock.advance(1_000);
  await waitFor(() => hub.renewals.length === 1);
  expect(hub.renewals[0]).toEqual({ serial: oldSerial, cluster: "c1" });
  await waitFor(() => clock.pending() >= 1);
  expect((await createFileIdentityStore(dir).load())?.certificatePem).toBe(
    old.certificatePem,
  );
  expect(k.current().certificatePem).toBe(old.certificatePem);

  await clock.advance(5_000);
  await waitFor(() => hub.renewals.length === 2);
  await waitFor(() => k.current().certificatePem !== old.certificatePem);
  expect(hub.renewals[1]).toEqual({ serial: oldSerial, cluster: "c1" });
  const renewed = k.current();
  expect(renewed.keyPem).not.toBe(old.keyPem);
  expect(await createFileIdentityStore(dir).load()).toEqual(renewed);
  const renewedNotAfterMs = certificateValidity(
    renewed.certificatePem,
  ).notAfterMs;
  expect(k.nextRenewalAtMs()).toBe(
    Math.round(clock.now() + ((renewedNotAfterMs - clock.now()) * 2) / 3),
  );

  const newSerial = serialOf(renewed.certificatePem);
  await waitFor(
    () =>
      hub.streams.some(
        (s) => s.open && s.peer?.serial === newSerial && s.hello === "c1",
      ),
    { timeoutMs: 10_000 },
  );
  await waitFor(() => session.state === "connected");
  expect(hub.streams.filter((s) => s.open)).toHaveLength(1);
});

function serialOf(pem: string): string {
  return new X509Certificate(pem).serialNumber;
}
