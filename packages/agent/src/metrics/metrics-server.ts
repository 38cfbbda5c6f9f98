/**
 * The agent's HTTP endpoint: `/metrics` in the Prometheus text format and `/healthz` (200 while
 * the process is serving, 503 once it is stopping, so an orchestrator stops routing to it).
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { FlotillaError } from "@flotilla/core";
import type { Registry } from "prom-client";

/** Options of {@link startMetricsServer}. */
export interface MetricsServerOptions {
  readonly host: string;
  /** 0 picks a free port; see {@link MetricsServer.port}. */
  readonly port: number;
  readonly registry: Registry;
  /** Extra fields for the `/healthz` body, e.g. how many sessions are connected. */
  readonly health?: () => Readonly<Record<string, unknown>>;
}

/** A listening metrics server. */
export interface MetricsServer extends AsyncDisposable {
  readonly port: number;
  /** From now on `/healthz` answers 503. */
  markStopping(): void;
  close(): Promise<void>;
}

/** Starts listening; rejects with `unavailable` when the address cannot be bound. */
export async function startMetricsServer(
  options: MetricsServerOptions,
): Promise<MetricsServer> {
  let stopping = false;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
    } else if (path === "/metrics") {
      options.registry.metrics().then(
        (text) => {
          res
            .writeHead(200, { "content-type": options.registry.contentType })
            .end(text);
        },
        () => {
          res.writeHead(500).end("metrics unavailable\n");
        },
      );
    } else if (path === "/healthz") {
      const body = {
        status: stopping ? "stopping" : "ok",
        ...options.health?.(),
      };
      res
        .writeHead(stopping ? 503 : 200, {
          "content-type": "application/json",
        })
        .end(`${JSON.stringify(body)}\n`);
    } else {
      res.writeHead(404).end("not found\n");
    }
  });
  server.listen(options.port, options.host);
  try {
    await once(server, "listening");
  } catch (error) {
    throw new FlotillaError(
      "unavailable",
      `Cannot serve metrics on ${options.host}:${String(options.port)}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const close = async (): Promise<void> => {
    if (!server.listening) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  };
  return {
    port: (server.address() as AddressInfo).port,
    markStopping: () => {
      stopping = true;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
