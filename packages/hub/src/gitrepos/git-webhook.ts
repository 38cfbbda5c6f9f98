/**
 * `POST /hooks/git` on the hub's HTTP port (docs/gitops.md#webhooks): a git server says a
 * repository changed, and the GitRepos following it sync now instead of at their next poll. The
 * request is verified against the hub's webhook secret (`--git-webhook-secret`): GitHub's
 * `X-Hub-Signature-256: sha256=HMAC` of the body, or GitLab's `X-Gitlab-Token` equal to the
 * secret. A refused request is logged and counted; the answer (202) does not wait for the sync.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../logger.js";

/** The largest body read (GitHub's push payloads are capped at 25 MB; a few MiB is plenty here). */
export const MAX_WEBHOOK_BODY_BYTES = 4 * 1024 * 1024;

/** How a request ended, for the metric. */
export const WEBHOOK_OUTCOMES = [
  "accepted",
  "unsigned",
  "bad_signature",
  "too_large",
  "bad_request",
] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

export interface GitWebhookDeps {
  readonly secret: string;
  /** Syncs the repositories following these URLs; returns their names. */
  readonly syncByUrl: (urls: readonly string[]) => readonly string[];
  readonly log: Logger;
  readonly onRequest?: (outcome: WebhookOutcome) => void;
  readonly maxBodyBytes?: number;
}

/** The repository URLs a GitHub or GitLab push payload names. */
export function payloadUrls(body: unknown): string[] {
  const urls: string[] = [];
  const pick = (value: unknown, keys: readonly string[]): void => {
    if (typeof value !== "object" || value === null) return;
    const record = value as Record<string, unknown>;
    for (const key of keys) {
      const url = record[key];
      if (typeof url === "string" && url !== "") urls.push(url);
    }
  };
  if (typeof body === "object" && body !== null) {
    const record = body as Record<string, unknown>;
    pick(record["repository"], [
      "clone_url",
      "ssh_url",
      "html_url",
      "git_url",
      "url",
    ]);
    pick(record["project"], ["git_http_url", "git_ssh_url", "web_url"]);
  }
  return urls;
}

const equal = (a: Buffer, b: Buffer): boolean =>
  a.length === b.length && timingSafeEqual(a, b);

/** Whether the request carries a valid signature (GitHub) or token (GitLab) for `secret`. */
export function verifiedBy(
  secret: string,
  headers: IncomingMessage["headers"],
  body: Buffer,
): "ok" | "unsigned" | "bad_signature" {
  const signature = headers["x-hub-signature-256"];
  const token = headers["x-gitlab-token"];
  if (typeof signature === "string") {
    const expected = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
    return equal(Buffer.from(signature), Buffer.from(expected))
      ? "ok"
      : "bad_signature";
  }
  if (typeof token === "string")
    return equal(Buffer.from(token), Buffer.from(secret))
      ? "ok"
      : "bad_signature";
  return "unsigned";
}

function answer(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, {
    "Content-Type": "text/plain",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
  });
  response.end(text);
}

/** The handler of `POST /hooks/git`. */
export function createGitWebhook(
  deps: GitWebhookDeps,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const max = deps.maxBodyBytes ?? MAX_WEBHOOK_BODY_BYTES;
  const done = (
    response: ServerResponse,
    outcome: WebhookOutcome,
    status: number,
    text: string,
  ): void => {
    deps.onRequest?.(outcome);
    answer(response, status, text);
  };
  return async (request, response) => {
    if (request.method !== "POST") {
      response.setHeader("Allow", "POST");
      answer(response, 405, "Method not allowed\n");
      return;
    }
    const tooLarge = (): void => {
      done(
        response,
        "too_large",
        413,
        `Body larger than ${String(max)} bytes\n`,
      );
      request.destroy();
    };
    // The announced length first, then what actually arrives.
    if (Number(request.headers["content-length"] ?? "0") > max) {
      tooLarge();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) {
        tooLarge();
        return;
      }
      chunks.push(chunk);
    }
    const body = Buffer.concat(chunks);
    const verdict = verifiedBy(deps.secret, request.headers, body);
    if (verdict !== "ok") {
      deps.log.warn(
        { remote: request.socket.remoteAddress, verdict },
        "git webhook refused",
      );
      done(
        response,
        verdict,
        401,
        verdict === "unsigned"
          ? "Missing X-Hub-Signature-256 or X-Gitlab-Token\n"
          : "Bad signature\n",
      );
      return;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString("utf8"));
    } catch {
      done(response, "bad_request", 400, "The body is not JSON\n");
      return;
    }
    const urls = payloadUrls(payload);
    const names = deps.syncByUrl(urls);
    deps.log.info({ urls, gitrepos: names }, "git webhook");
    done(response, "accepted", 202, `${JSON.stringify({ gitrepos: names })}\n`);
  };
}
