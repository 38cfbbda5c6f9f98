#!/usr/bin/env node
/**
 * `flotilla-hub`: the hub process. Reads its config (flags, then FLOTILLA_* environment
 * variables), connects to NATS (reconnecting forever: the hub outlives NATS restarts), builds the
 * JetStream adapters (state store, intent publisher, audit log, object reader), starts the hub's
 * gRPC server (AdminService + AgentService, reflection) and the HTTP server (/metrics, /healthz,
 * /readyz), and stops cleanly on SIGTERM or SIGINT.
 *
 * Exit codes: 0 after a clean stop, 2 for bad configuration, 1 when it cannot start.
 */
import { formatProblem } from "@flotilla/core";
import { HUB_USAGE, parseHubConfig } from "./config/config.js";
import { createLogger, type Logger } from "./logger.js";
import { createHubMetrics } from "./metrics/metrics.js";
import { loadAdminTokens, type AdminTokens } from "./security/admin-tokens.js";
import { loadNatsAuth, type NatsAuth } from "./security/nats-auth-config.js";
import { natsSetupMain } from "./security/nats-setup-command.js";
import { chartFetcherOf } from "./bundles/chart-fetcher.js";
import { serveHub, type ServingHub } from "./serve-hub.js";
import { stopWithin, type StopStep } from "./shutdown.js";

/** How long after main() has finished the process may linger before it exits anyway. */
const EXIT_GRACE_MS = 1_000;
/** A part taking this long to stop is named in the log (it usually takes milliseconds). */
const SLOW_STOP_STEP_MS = 1_000;

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
    stopping.abort();
    process.stderr.write(
      `flotilla-hub: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 2;
  }
  if (natsAuth.agentsAccount !== undefined) {
    log.info(
      {
        account: natsAuth.accountPublicKey,
        agentsAccount: natsAuth.agentsAccount.template.publicKey,
        servers: config.agentNatsServers,
      },
      "Agents get NATS credentials of their own, in their own account",
    );
  }

  const charts = await chartFetcherOf(config.charts);
  if (!charts.ok) {
    stopping.abort();
    for (const problem of charts.problems) {
      process.stderr.write(
        `flotilla-hub: ${formatProblem(problem)} (--chart-credentials)\n`,
      );
    }
    return 2;
  }

  // Whatever is started is stopped in reverse order, after a failed start as on SIGTERM.
  const opened: StopStep[] = [
    {
      name: "admin token watch",
      stop: () => {
        stopping.abort();
      },
    },
  ];
  let serving: ServingHub;
  try {
    serving = await serveHub(
      {
        config,
        log,
        metrics,
        natsAuth,
        adminTokens,
        insecureAdmin,
        charts: charts.value,
      },
      opened,
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.fatal({ err: error }, "cannot start");
    await stopAll(opened, config.shutdownTimeoutMs, log);
    // One line: the cause is what a person (or `kubectl logs`) needs; the stack is in the log.
    process.stderr.write(
      `flotilla-hub: cannot start: ${message.replace(/\s*\n\s*/g, " ")}\n`,
    );
    return 1;
  }
  const host = config.listen.slice(0, config.listen.lastIndexOf(":"));
  process.stdout.write(
    `flotilla-hub: serving gRPC on ${host}:${String(serving.port)}${serving.httpAddress === undefined ? "" : `, HTTP on ${serving.httpAddress}`}\n`,
  );

  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  log.info({ timeoutMs: config.shutdownTimeoutMs }, "stopping");
  await stopAll(opened, config.shutdownTimeoutMs, log);
  log.info("stopped");
  return 0;
}

/** Stops `opened` in reverse order within `timeoutMs`, logging what did not stop cleanly. */
async function stopAll(
  opened: readonly StopStep[],
  timeoutMs: number,
  log: Logger,
): Promise<void> {
  const outcome = await stopWithin([...opened].reverse(), timeoutMs);
  const slow = outcome.tookMs.filter(({ ms }) => ms >= SLOW_STOP_STEP_MS);
  if (slow.length > 0) {
    log.warn(
      {
        slow: slow.map(({ name, ms }) => ({ part: name, ms: Math.round(ms) })),
      },
      "stopping took long",
    );
  }
  for (const { name, err } of outcome.failed) {
    log.warn({ err, part: name }, "cannot stop cleanly");
  }
  if (outcome.unfinished.length > 0) {
    // Still a requested stop (exit 0): what was left is closed, and the process exits anyway.
    log.warn(
      { timeoutMs, unfinished: outcome.unfinished },
      "stop took longer than --shutdown-timeout; closed what was left",
    );
  }
}

main().then(
  (code) => {
    process.exitCode = code;
    // Everything of ours is stopped; exit even if a library left a handle open (a socket still
    // closing, a request nobody will answer).
    setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
  },
  (error: unknown) => {
    process.stderr.write(
      `flotilla-hub: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
