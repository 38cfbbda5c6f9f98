/**
 * Making the hub's NATS keys anew on a running fleet (docs/security.md, "Rotation"): with real
 * processes, `flotilla-hub nats-setup --from DIR` keeps the operator and the hub's account, so
 * the hub finds its state after NATS restarts with the new setup; the credentials of before are
 * refused; and agents, refused with theirs, renew their identity on their own and go on receiving
 * intents and bundle content.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect, credsAuthenticator } from "@nats-io/transport-node";
import { agentInboxPrefix } from "@flotilla/protocol";
import { runProcess, waitFor } from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";
import { compact } from "@flotilla/core";

let e2e: E2E;
let bundleDir: string;

async function cliOk(...args: string[]): Promise<string> {
  const result = await e2e.cli(...args);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

async function applyRevision(greeting: string): Promise<void> {
  await writeFile(
    join(bundleDir, "config.yaml"),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  greeting: ${greeting}\n`,
  );
  await cliOk("bundle", "apply", bundleDir, "--name", "web");
}

async function readyOnAll(): Promise<boolean> {
  const got = JSON.parse(await cliOk("bundle", "get", "web", "-o", "json")) as {
    bundle: { revision: string; counts: { targets: number; ready: number } };
  };
  return got.bundle.counts.targets === 2 && got.bundle.counts.ready === 2;
}

/** The NATS credentials cluster rot01's agent holds now. */
function agentCreds(): Promise<string> {
  return readFile(
    join(e2e.stateDir("fleet"), "identities", "rot01", "..data", "nats.creds"),
    "utf8",
  );
}

async function refusedByNats(
  creds: string,
  inboxPrefix?: string,
): Promise<string> {
  try {
    const nc = await connect({
      servers: e2e.nats.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
      reconnect: false,
      ...compact({ inboxPrefix }),
    });
    await nc.close();
    return "connected";
  } catch (error) {
    return String(error);
  }
}

beforeAll(async () => {
  e2e = await startE2E({ secure: true });
  await e2e.startAgents("fleet", fleetFile([clusters("rot", 2, {})]));
  await e2e.connected(2);
  bundleDir = join(e2e.stateDir("fleet"), "..", "bundle");
  await mkdir(bundleDir);
  await writeFile(
    join(bundleDir, "fleet.yaml"),
    "namespace: web\ntargets:\n  - clusterSelector: {}\n",
  );
  await applyRevision("before");
  await waitFor(readyOnAll, {
    timeoutMs: 30_000,
    intervalMs: 300,
    message: "the first revision Ready on both clusters",
  });
}, 120_000);

afterAll(async () => {
  await e2e.stop();
});

describe("nats-setup --from on a running fleet", () => {
  it("keeps the hub's state, refuses the old credentials, and agents recover by themselves", async () => {
    const dir = e2e.security?.natsSetupDir ?? "";
    const oldHubCreds = await readFile(join(dir, "hub.creds"), "utf8");
    const oldAgentCreds = await agentCreds();
    const before = JSON.parse(
      await cliOk("bundle", "get", "web", "-o", "json"),
    ) as { bundle: { revision: string } };

    // The operator runs the setup again from the directory it keeps, into the same directory.
    const setup = await runProcess({
      name: "nats-setup",
      args: [
        "packages/hub/dist/main.js",
        "nats-setup",
        "--from",
        dir,
        "--out",
        dir,
        "--force",
        "--resolver-dir",
        join(dir, "..", "nats-jwt"),
      ],
    });
    expect(setup.code, setup.stderr).toBe(0);
    // Then restarts NATS with the new fragment, and the hub on the new files.
    await e2e.hub().stop();
    await e2e.nats.restart({
      config: await readFile(join(dir, "nats-auth.conf"), "utf8"),
    });
    await e2e.startHub();

    // The hub found its state: the bundle and its revision are there.
    const after = JSON.parse(
      await cliOk("bundle", "get", "web", "-o", "json"),
    ) as { bundle: { revision: string } };
    expect(after.bundle.revision).toBe(before.bundle.revision);
    // What was issued before is refused.
    expect(await refusedByNats(oldHubCreds)).toMatch(/Authorization Violation/);
    expect(
      await refusedByNats(oldAgentCreds, agentInboxPrefix("rot01")),
    ).toMatch(/Authorization Violation/);

    // The agents renew on their own and take the next revision.
    await e2e.connected(2, 60_000);
    await applyRevision("after");
    await waitFor(readyOnAll, {
      timeoutMs: 90_000,
      intervalMs: 500,
      message: "the second revision Ready on both clusters",
    });
    expect(await agentCreds()).not.toBe(oldAgentCreds);
  }, 240_000);
});
