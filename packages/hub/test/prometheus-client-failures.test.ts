/**
 * The Prometheus client against small local HTTP servers that misbehave the ways a real network
 * and a real server can: too large an answer, no answer, an error page, nothing listening, and a
 * server that echoes the bearer token back. Every failure is a reason; none throws, none passes.
 */
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type ServerResponse,
} from "node:http";
import { afterEach, describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import {
  createPrometheusClient,
  type PrometheusClientOptions,
} from "../src/gates/prometheus-client.js";

const TOKEN = "s3cr3t-token-Zq9";

interface Local {
  readonly url: string;
  readonly requests: {
    method: string;
    url: string;
    headers: IncomingMessage["headers"];
    body: string;
  }[];
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** Serves `handler` on 127.0.0.1:0; records each request with its body. */
async function serve(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<Local> {
  const requests: Local["requests"] = [];
  const listener: RequestListener = (request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      requests.push({
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body,
      });
      handler(request, response);
    });
  };
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string")
    throw new Error("no address");
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  );
  return { url: `http://127.0.0.1:${String(address.port)}`, requests };
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response
    .writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify(body));
}

function client(url: string, options: Partial<PrometheusClientOptions> = {}) {
  return createPrometheusClient({ url, ...options });
}

const vector = (
  ...series: [Record<string, string>, string][]
): Record<string, unknown> => ({
  status: "success",
  data: {
    resultType: "vector",
    result: series.map(([metric, value]) => ({
      metric,
      value: [1_700_000_000.5, value],
    })),
  },
});

describe("the Prometheus client's failures", () => {
  test("stops reading an answer larger than maxBytes, with or without its length announced", async () => {
    // Chunked and endless: the client must give up at the limit, not read on.
    const endless = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      const chunk = `[${" ".repeat(64 * 1024)}`;
      const write = (): void => {
        let room = true;
        while (room) room = response.write(chunk);
        response.once("drain", write);
      };
      write();
    });
    const outcome = await client(endless.url, { maxBytes: 1024 }).query("up");
    expect(outcome).toEqual({
      ok: false,
      reason: `Prometheus at ${endless.url} sent an answer larger than 1024 bytes`,
    });
    const body = JSON.stringify(vector([{ a: "x".repeat(2_000) }, "1"]));
    const announced = await serve((_request, response) => {
      response
        .writeHead(200, {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(body)),
        })
        .end(body);
    });
    expect(await client(announced.url, { maxBytes: 1024 }).query("up")).toEqual(
      {
        ok: false,
        reason: `Prometheus at ${announced.url} sent an answer larger than 1024 bytes`,
      },
    );
    // The same answer within a larger limit is read.
    expect(await client(announced.url, { maxBytes: 4096 }).query("up")).toEqual(
      { ok: true, values: [1] },
    );
  });

  test("gives up on a server that never answers, or stops half-way, after timeoutMs", async () => {
    const silent = await serve(() => {
      // never answers
    });
    expect(await client(silent.url, { timeoutMs: 200 }).query("up")).toEqual({
      ok: false,
      reason: `Prometheus at ${silent.url} gave no answer within 200ms`,
    });
    const stalled = await serve((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"status":"succ');
    });
    expect(await client(stalled.url, { timeoutMs: 1_000 }).query("up")).toEqual(
      {
        ok: false,
        reason: `Prometheus at ${stalled.url} gave no answer within 1s`,
      },
    );
  });

  test("an HTTP error with a body that is not JSON names the status and quotes the body", async () => {
    const local = await serve((_request, response) => {
      response
        .writeHead(500, { "content-type": "text/html" })
        .end("<html>\n<h1>upstream exploded</h1>\n</html>");
    });
    expect(await client(local.url).query("up")).toEqual({
      ok: false,
      reason: `Prometheus at ${local.url} answered HTTP 500 Internal Server Error: "<html> <h1>upstream exploded</h1> </html>"`,
    });
  });

  test("a 200 that is not JSON, or not a query result, is refused", async () => {
    const html = await serve((_request, response) => {
      response.writeHead(200).end("<html>login</html>");
    });
    expect(await client(html.url).query("up")).toEqual({
      ok: false,
      reason: `Prometheus at ${html.url} answered with something that is not JSON: "<html>login</html>"`,
    });
    const other = await serve((_request, response) => {
      json(response, 200, { hello: "world" });
    });
    expect(await client(other.url).query("up")).toEqual({
      ok: false,
      reason:
        'the answer is not a Prometheus query result: "status" is missing',
    });
  });

  test("Prometheus's error of a failed query is shown with the HTTP status", async () => {
    const local = await serve((_request, response) => {
      json(response, 422, {
        status: "error",
        errorType: "execution",
        error: "query processing would load too many samples into memory",
      });
    });
    expect(await client(local.url).query("up")).toEqual({
      ok: false,
      reason:
        "Prometheus refused the query (HTTP 422 Unprocessable Entity): execution: query processing would load too many samples into memory",
    });
  });

  test("nothing listening, and a host that does not exist, name the URL", async () => {
    const gone = await serve(() => undefined);
    await closers.pop()?.();
    expect(await client(gone.url).query("up")).toEqual({
      ok: false,
      reason: `cannot reach Prometheus at ${gone.url}: connection refused (ECONNREFUSED)`,
    });
    const nowhere = "http://prometheus.invalid:9090";
    expect(await client(nowhere, { timeoutMs: 5_000 }).query("up")).toEqual({
      ok: false,
      reason: `cannot reach Prometheus at ${nowhere}: no such host "prometheus.invalid" (ENOTFOUND)`,
    });
  });

  test("sends the query as a form to the path prefix, with the token as a bearer header that no reason ever holds", async () => {
    const local = await serve((request, response) => {
      const auth = request.headers.authorization ?? "";
      if (request.url === "/prom/api/v1/query" && auth === `Bearer ${TOKEN}`)
        json(response, 200, vector([{ job: "a" }, "0.25"]));
      // A careless proxy that echoes what it was sent.
      else response.writeHead(401).end(`bad credentials: ${auth}`);
    });
    const good = client(`${local.url}/prom/`, { bearerToken: TOKEN });
    expect(good.url).toBe(`${local.url}/prom`);
    expect(await good.query('rate(errors{cluster=~"a|b"}[5m])')).toEqual({
      ok: true,
      values: [0.25],
    });
    expect(local.requests[0]).toMatchObject({
      method: "POST",
      url: "/prom/api/v1/query",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/x-www-form-urlencoded",
      },
    });
    expect(new URLSearchParams(local.requests[0]?.body).get("query")).toBe(
      'rate(errors{cluster=~"a|b"}[5m])',
    );

    const wrongPath = client(local.url, { bearerToken: TOKEN });
    const refused = await wrongPath.query("up");
    expect(refused).toEqual({
      ok: false,
      reason: `Prometheus at ${local.url} answered HTTP 401 Unauthorized: "bad credentials: Bearer [redacted]"`,
    });
    const reasons: string[] = [refused.ok ? "" : refused.reason];
    for (const options of [
      { url: local.url.replace(/:\d+$/, ":1") },
      { url: local.url, timeoutMs: 1 },
      { url: `${local.url}/prom`, maxBytes: 10 },
    ]) {
      const outcome = await client(options.url, {
        ...options,
        bearerToken: TOKEN,
      }).query("up");
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) reasons.push(outcome.reason);
    }
    expect(reasons).toHaveLength(4);
    for (const reason of reasons) expect(reason).not.toContain(TOKEN);
  });

  test("a cancelled query says so", async () => {
    const silent = await serve(() => undefined);
    const abort = new AbortController();
    const pending = client(silent.url).query("up", { signal: abort.signal });
    abort.abort();
    expect(await pending).toEqual({
      ok: false,
      reason: "the query was cancelled",
    });
  });

  test("refuses a URL with credentials, another scheme, a query, and limits that are not positive", () => {
    const refusals = [
      { url: "http://user:pa55@prom:9090" },
      { url: "ftp://prom" },
      { url: "http://prom:9090/?x=1" },
      { url: "prom:9090x" },
      { url: "http://prom:9090", timeoutMs: 0 },
      { url: "http://prom:9090", maxBytes: 1.5 },
      { url: "http://prom:9090", bearerToken: "two words" },
    ].map((options) => {
      try {
        createPrometheusClient(options);
        return "created";
      } catch (error) {
        expect(error).toBeInstanceOf(FlotillaError);
        return (error as Error).message;
      }
    });
    expect(refusals).toEqual([
      'Cannot create a Prometheus client for "http://[redacted]@prom:9090": it holds credentials: give a bearer token instead (--prometheus-bearer-token-file)',
      'Cannot create a Prometheus client for "ftp://prom": it must be an http:// or https:// URL',
      'Cannot create a Prometheus client for "http://prom:9090/?x=1": it must have no query and no fragment',
      'Cannot create a Prometheus client for "prom:9090x": it must be an http:// or https:// URL',
      "Cannot create a Prometheus client: timeoutMs must be a positive whole number, not 0",
      "Cannot create a Prometheus client: maxBytes must be a positive whole number, not 1.5",
      "Cannot create a Prometheus client: the bearer token is empty or holds a space or a character that is not printable ASCII",
    ]);
  });
});
