/**
 * Admin authentication in a whole hub (in-memory adapters, real gRPC): the authenticated caller
 * reaches the existing handlers, so that a state-changing call is audited under `token:NAME` with
 * its role, and a refused one is audited as Denied with the caller, the target and the reason.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callUnary, createAdminServiceClient } from "@flotilla/protocol";
import { credentials, Metadata, ServerCredentials } from "@grpc/grpc-js";
import pino from "pino";
import { expect, it } from "vitest";
import { auditHandlers } from "../src/audit/admin-audit.js";
import { createMemoryAuditLog } from "../src/audit/memory-audit-log.js";
import { createBundleService } from "../src/bundles/bundle-service.js";
import { objectReaderOf } from "../src/bundles/object-reader.js";
import { createHub } from "../src/hub.js";
import { createMemoryIntentPublisher } from "../src/intents/memory-intent-publisher.js";
import { createAdminAuth } from "../src/security/admin-auth.js";
import { loadAdminTokens } from "../src/security/admin-tokens.js";
import { createMemoryStore } from "../src/store/memory-store.js";

const OPS = "ops-token-0123456789abcdef";
const ROOT = "root-token-0123456789abcdef";

function bearer(token: string): Metadata {
  const metadata = new Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  // Ignored once callers authenticate: the header cannot rename a token's holder.
  metadata.set("x-flotilla-actor", "someone-else");
  return metadata;
}

it("records the token's holder and role in the audit log, for allowed and refused calls", async () => {
  const dir = await mkdtemp(join(tmpdir(), "flotilla-admin-auth-hub-"));
  const file = join(dir, "tokens.yaml");
  await writeFile(
    file,
    `- name: ops\n  role: operator\n  token: ${OPS}\n- name: root\n  role: admin\n  token: ${ROOT}\n`,
  );
  const logger = pino({ level: "silent" });
  const tokens = await loadAdminTokens({ file, logger });
  const store = createMemoryStore();
  const publisher = createMemoryIntentPublisher();
  const audit = createMemoryAuditLog();
  await store.start();
  await publisher.start();
  await audit.start();
  const hub = createHub({
    store,
    publisher,
    audit,
    logger,
    heartbeatIntervalMs: 1_000,
    missedHeartbeats: 3,
    passIntervalMs: 50,
    bundles: (deps) =>
      createBundleService({
        ...deps,
        objects: objectReaderOf((digest) => publisher.bundleContent(digest)),
      }),
    auditHandlers,
    adminAuth: (deps) => createAdminAuth({ ...deps, tokens }),
  });
  const port = await hub.start(
    "127.0.0.1:0",
    ServerCredentials.createInsecure(),
  );
  const admin = createAdminServiceClient(
    `127.0.0.1:${String(port)}`,
    credentials.createInsecure(),
  );
  try {
    const request = {
      group: { name: "prod", labels: {}, selector: "env=prod" },
      reason: "new region",
    };
    await expect(
      callUnary(admin, "createClusterGroup", request, {
        metadata: bearer(OPS),
      }),
    ).rejects.toMatchObject({
      code: "permission_denied",
      message:
        '"token:ops" (role operator) may not call CreateClusterGroup: it needs role admin',
    });
    await callUnary(admin, "createClusterGroup", request, {
      metadata: bearer(ROOT),
    });
    await expect(
      callUnary(admin, "listClusterGroups", {}, { metadata: new Metadata() }),
    ).rejects.toMatchObject({ code: "unauthenticated" });

    const { events } = await audit.list({});
    expect(
      events.map((e) => ({
        actor: e.actor,
        role: e.role,
        method: e.method,
        targetName: e.targetName,
        reason: e.reason,
        outcome: e.outcome,
      })),
    ).toEqual([
      {
        actor: "token:ops",
        role: "operator",
        method: "/flotilla.v1.AdminService/CreateClusterGroup",
        targetName: "prod",
        reason: "new region",
        outcome: "Denied",
      },
      {
        actor: "token:root",
        role: "admin",
        method: "/flotilla.v1.AdminService/CreateClusterGroup",
        targetName: "prod",
        reason: "new region",
        outcome: "Succeeded",
      },
      {
        actor: expect.stringMatching(/^anonymous@/),
        role: "",
        method: "/flotilla.v1.AdminService/ListClusterGroups",
        targetName: "",
        reason: "",
        outcome: "Denied",
      },
    ]);
  } finally {
    admin.close();
    await hub.stop();
    await audit.stop();
    await publisher.stop();
    await store.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
