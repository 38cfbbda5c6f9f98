/**
 * The hub's plain-HTTP side door (`--http-listen`): `/metrics` for Prometheus, `/healthz`
 * (liveness) and `/readyz` (readiness) for probes. Nothing else is served, and nothing here changes state, which is why it needs neither
 * TLS nor authentication of its own (bind it to a private address). The one exception, only with a
 * webhook secret configured, is `POST /hooks/git`, which verifies each request's signature and can
 * only make a GitRepo sync sooner (docs/gitops.md#webhooks).
 */
import { once } from "node:events";
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { compact, FlotillaError } from "@flotilla/core";
import type { Registry } from "prom-client";
import type { Logger } from "../logger.js";

/**
 * What `/healthz` and `/readyz` report: `ok`, one line per check (e.g. `nats: "connected"`) and,
 * when failing, why in a sentence each.
 */
export interface HealthReport {
  readonly ok: boolean;
  readonly checks: Readonly<Record<string, string>>;
  readonly reasons?: readonly string[];
}

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  /** `HOST:PORT` (port 0: any free port; see `address`). */
  readonly listen: string;
  /** The registry to serve; `createHubMetrics()` fits. */
  readonly metrics: { readonly registry: Registry };
  /** Called on every `/healthz` request; a throw counts as failing. */
  readonly health: () => HealthReport | Promise<HealthReport>;
  /** Called on every `/readyz` request; a throw counts as failing. Default: `health`. */
  readonly readiness?: () => HealthReport | Promise<HealthReport>;
  /** Where failures to render a response are reported. */
  readonly log?: Logger;
  /** The handler of `POST /hooks/git` (gitrepos/git-webhook.ts); absent: 404. */
  readonly gitWebhook?: (
    request: IncomingMessage,
    response: ServerResponse,
  ) => Promise<void>;
}

/** A running HTTP server. */
export interface HttpServer extends AsyncDisposable {
  /** The bound address, `HOST:PORT` (IPv6 hosts in brackets), with the real port. */
  readonly address: string;
  /** Stops listening and closes open connections. Idempotent. */
  close(): Promise<void>;
}

/** Where git servers post their push events. */
export const GIT_WEBHOOK_PATH = "/hooks/git";

/** Splits `HOST:PORT` (`[v6]:PORT` too); throws `invalid_argument` otherwise. */
function hostAndPort(listen: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(listen);
  const port = Number(match?.[3]);
  const host = match?.[1] ?? match?.[2];
  if (host === undefined || !(port <= 65535)) {
    throw FlotillaError.invalid("HTTP listen address", [
      { path: "listen", message: "must be HOST:PORT", value: listen },
    ]);
  }
  return { host, port };
}

/** Starts serving `/metrics`, `/healthz` and `/readyz` on `listen`; resolves once listening. */
export async function startHttpServer(
  options: HttpServerOptions,
): Promise<HttpServer> {
  const { host, port } = hostAndPort(options.listen);
  const server = createServer((request, response) => {
    handle(options, request, response).catch((error: unknown) => {
      options.log?.error(
        { err: error, url: request.url },
        "HTTP request failed",
      );
      if (!response.headersSent)
        respond(response, 500, "text/plain", "Internal error\n");
      else response.destroy();
    });
  });
  server.listen(port, host);
  try {
    await once(server, "listening");
  } catch (error) {
    throw new FlotillaError(
      "unavailable",
      `Cannot listen for HTTP on ${options.listen}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const bound = server.address() as AddressInfo;
  const address =
    bound.family === "IPv6"
      ? `[${bound.address}]:${String(bound.port)}`
      : `${bound.address}:${String(bound.port)}`;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
      server.closeAllConnections();
    });
    return closed;
  };
  return { address, close, [Symbol.asyncDispose]: close };
}

async function handle(
  options: HttpServerOptions,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = (request.url ?? "/").split("?", 1)[0];
  if (path === GIT_WEBHOOK_PATH && options.gitWebhook !== undefined) {
    await options.gitWebhook(request, response);
    return;
  }
  if (path !== "/metrics" && path !== "/healthz" && path !== "/readyz") {
    respond(
      response,
      404,
      "text/plain",
      "Not found: try /metrics, /healthz or /readyz\n",
    );
    return;
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.setHeader("Allow", "GET, HEAD");
    respond(response, 405, "text/plain", "Method not allowed\n");
    return;
  }
  if (path === "/metrics") {
    const { registry } = options.metrics;
    respond(response, 200, registry.contentType, await registry.metrics());
    return;
  }
  const probe =
    path === "/readyz" ? (options.readiness ?? options.health) : options.health;
  const report = await Promise.resolve()
    .then(probe)
    .catch((error: unknown): HealthReport => ({
      ok: false,
      checks: {
        health: error instanceof Error ? error.message : String(error),
      },
    }));
  const body = JSON.stringify(
    compact({
      status: report.ok ? "ok" : "failing",
      checks: report.checks,
      reasons: report.reasons?.length ? report.reasons : undefined,
    }),
  );
  respond(response, report.ok ? 200 : 503, "application/json", `${body}\n`);
}

function respond(
  response: ServerResponse,
  status: number,
  contentType: string,
  body: string,
): void {
  response.writeHead(status, {
    "Content-Type": contentType,
    "Content-Length": Buffer.byteLength(body),
    "Cache-Control": "no-store",
  });
  response.end(response.req.method === "HEAD" ? undefined : body);
}
