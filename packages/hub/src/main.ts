#!/usr/bin/env node
/**
 * `flotilla-hub`: the hub process. Reads its config (flags, then FLOTILLA_* environment
 * variables), connects to NATS (reconnecting forever: the hub outlives NATS restarts), builds the
 * JetStream adapters (state store, intent publisher, audit log, object reader), starts the hub's
 * gRPC server (AdminService + AgentService, reflection) and the HTTP server (/metrics, /healthz),
 * and stops cleanly on SIGTERM or SIGINT.
 *
 * Exit codes: 0 after a clean stop, 2 for bad configuration, 1 when it cannot start.
 */
import { formatProblem } from "@flotilla/core";
import { ServerCredentials } from "@grpc/grpc-js";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { auditHandlers } from "./audit/admin-audit.js";
import { createJetStreamAuditLog } from "./audit/jetstream-audit-log.js";
import { createBundleService } from "./bundles/bundle-service.js";
import { createJetStreamObjectReader } from "./bundles/object-reader.js";
import { HUB_USAGE, parseHubConfig } from "./config.js";
import { createHub, type HubSecurity } from "./hub.js";
import { startHttpServer, type HttpServer } from "./http-server.js";
import { createJetStreamIntentPublisher } from "./intents/jetstream-intent-publisher.js";
import { createLogger } from "./logger.js";
import { createHubMetrics } from "./metrics.js";
import { hubObserverOf, startHubGauges } from "./metrics-observer.js";
import { createAdminAuth } from "./security/admin-auth.js";
import { loadAdminTokens, type AdminTokens } from "./security/admin-tokens.js";
import { prepareHubTls, type HubTls } from "./security/hub-tls.js";
import { createJetStreamStore } from "./store/jetstream-store.js";
import { loadNatsAuth, type NatsAuth } from "./security/nats-auth-config.js";
import { natsSetupMain } from "./security/nats-setup-command.js";

async function main(): Promise<number> {
  if (process.argv[2] === "nats-setup") {
    return natsSetupMain(process.argv.slice(3));
  }
  const parsed = parseHubConfig(process.argv.slice(2), process.env);
  if (!parsed.ok) {
    for (const problem of parsed.problems) {
      process.stderr.write(`flotilla-hub: ${formatProblem(problem)}\n`);
    }
    process.stderr.write("Run flotilla-hub --help for the options.\n");
    return 2;
  }
  const config = parsed.value;
  if (config.help) {
    process.stdout.write(`${HUB_USAGE}\n`);
    return 0;
  }
  const log = createLogger(config.logLevel);
  const metrics = createHubMetrics();
  const stopping = new AbortController();
  let adminTokens: AdminTokens | undefined;
  if (config.adminTokensFile !== undefined) {
    try {
      adminTokens = await loadAdminTokens({
        file: config.adminTokensFile,
        logger: log,
        signal: stopping.signal,
      });
    } catch (error) {
      process.stderr.write(
        `flotilla-hub: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      return 2;
    }
  }
  // A plaintext hub without a token file cannot authenticate anyone: development mode.
  const insecureAdmin = config.insecurePlaintext && adminTokens === undefined;
  if (insecureAdmin) {
    log.warn(
      "Insecure development mode: every AdminService caller is admin (no TLS, no --admin-tokens)",
    );
  }

  let natsAuth: NatsAuth;
  try {
    natsAuth = await loadNatsAuth(config);
  } catch (error) {
    process.stderr.write(
      `flotilla-hub: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 2;
  }
  if (natsAuth.agentNatsCredentials !== undefined) {
    log.info(
      { account: natsAuth.accountPublicKey, servers: config.agentNatsServers },
      "Agents get NATS credentials of their own",
    );
  }

  let nc: NatsConnection;
  try {
    nc = await connect({
      ...natsAuth.connectOptions,
      servers: [...config.nats],
      name: "flotilla-hub",
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    });
  } catch (error) {
    log.fatal({ err: error, nats: config.nats }, "cannot connect to NATS");
    process.stderr.write(
      `flotilla-hub: cannot connect to NATS at ${config.nats.join(", ")}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect")
        log.warn("NATS connection lost; reconnecting");
      if (status.type === "reconnect") log.info("NATS connection back");
    }
  })();

  const store = createJetStreamStore(
    { nc },
    { bucketPrefix: config.statePrefix },
  );
  const publisher = createJetStreamIntentPublisher({ nc });
  const audit = createJetStreamAuditLog(
    {
      nc,
      log,
      onSkipped: (reason) => {
        metrics.auditRecordSkipped(reason);
      },
    },
    { prefix: config.statePrefix },
  );
  const objects = createJetStreamObjectReader({ nc });
  await store.start();
  await publisher.start();
  await audit.start();
  // Under TLS the hub's CA signs agents' and admins' certificates (issue 6).
  let tls: HubTls | undefined;
  let security: HubSecurity | undefined;
  if (!config.insecurePlaintext) {
    try {
      tls = await prepareHubTls(config.tls, { store, logger: log });
      security = {
        authority: tls.authority,
        clusterCertificateTtlMs: config.tls.clusterCertTtlMs,
        ...(natsAuth.agentNatsCredentials === undefined
          ? {}
          : { natsCredentials: natsAuth.agentNatsCredentials }),
      };
    } catch (error) {
      log.fatal({ err: error }, "cannot prepare TLS");
      process.stderr.write(
        `flotilla-hub: cannot prepare TLS: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      return 1;
    }
  }

  const hub = createHub({
    store,
    publisher,
    audit,
    logger: log,
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    missedHeartbeats: config.missedHeartbeats,
    passIntervalMs: config.passIntervalMs,
    bundles: (deps) =>
      createBundleService(
        { ...deps, objects },
        { contentGc: config.bundleContentGc },
      ),
    auditHandlers,
    ...(security === undefined ? {} : { security }),
    adminAuth: (auditDeps, hooks) =>
      createAdminAuth({
        ...hooks,
        ...(tls === undefined
          ? {}
          : { verifyCertificate: tls.authority.verify }),
        ...auditDeps,
        ...(adminTokens === undefined ? {} : { tokens: adminTokens }),
        insecure: insecureAdmin,
      }),
    observer: hubObserverOf(metrics),
  });

  const credentials = tls?.credentials ?? ServerCredentials.createInsecure();
  const port = await hub.start(config.listen, credentials);
  const gauges = startHubGauges(hub, metrics, { intervalMs: 2_000 });

  let http: HttpServer | undefined;
  if (config.httpListen !== undefined) {
    http = await startHttpServer({
      listen: config.httpListen,
      metrics,
      log,
      health: () => {
        const report = hub.health();
        const natsOk = !nc.isClosed();
        return {
          ok: report.ok && natsOk,
          checks: { ...report.checks, nats: natsOk ? "connected" : "closed" },
        };
      },
    });
  }
  const host = config.listen.slice(0, config.listen.lastIndexOf(":"));
  process.stdout.write(
    `flotilla-hub: serving gRPC on ${host}:${String(port)}${http === undefined ? "" : `, HTTP on ${http.address}`}\n`,
  );

  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  log.info("stopping");
  stopping.abort();
  gauges.stop();
  await hub.stop();
  tls?.stop();
  await http?.close();
  await audit.stop();
  await publisher.stop();
  await store.stop();
  await nc.drain().catch(() => undefined);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `flotilla-hub: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
