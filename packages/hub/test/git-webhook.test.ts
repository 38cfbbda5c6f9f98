/**
 * POST /hooks/git on the hub's HTTP server (docs/gitops.md#webhooks): a GitHub-signed or GitLab
 * token request for a repository's URL makes its GitRepo sync (observed in its status), a bad or
 * missing signature is refused with 401 and counted, and without a secret the path is not served.
 */
import { createHmac } from "node:crypto";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startGitServer, waitFor, type GitServer } from "@flotilla/testkit";
import { createGitClient } from "../src/gitrepos/git-client.js";
import { createGitWebhook } from "../src/gitrepos/git-webhook.js";
import { createGitRepoManager } from "../src/gitrepos/gitrepo-manager.js";
import { startHttpServer } from "../src/metrics/http-server.js";
import { createHubMetrics } from "../src/metrics/metrics.js";
import { clusters, configMap, startHarness } from "./bundles-fixtures.js";

const SECRET = "webhook-secret";
let server: GitServer;

beforeAll(async () => {
  server = await startGitServer();
});

afterAll(async () => {
  await server.close();
});

const health = () => ({ ok: true, checks: {} });

describe("git webhook", () => {
  test("a signed push syncs the GitRepo of its URL; bad signatures are refused and counted", async () => {
    await using h = await startHarness(clusters(1));
    const repo = await server.createRepo("hooked");
    await repo.commit("main", {
      "fleet.yaml": "defaultNamespace: web\n",
      "cm.json": configMap("1"),
    });
    const manager = createGitRepoManager({
      store: h.store,
      bundles: h.manager,
      git: createGitClient(),
      now: () => Date.now(),
      log: pino({ level: "silent" }),
      // No polling: only the webhook can make it sync.
      every: () => () => undefined,
    });
    await manager.start();
    await manager.add({
      name: "hooked",
      repo: repo.httpUrl,
      paths: [],
      pollIntervalSeconds: 3600,
      deleteRemoved: true,
    });
    const metrics = createHubMetrics();
    await using http = await startHttpServer({
      listen: "127.0.0.1:0",
      metrics,
      health,
      gitWebhook: createGitWebhook({
        secret: SECRET,
        syncByUrl: (urls) => manager.syncByUrl(urls),
        log: pino({ level: "silent" }),
        onRequest: (outcome) => {
          metrics.gitWebhook(outcome);
        },
      }),
    });
    const url = `http://${http.address}/hooks/git`;
    const body = JSON.stringify({
      ref: "refs/heads/main",
      repository: { clone_url: repo.httpUrl.replace(/\.git$/, "") },
    });
    const post = (headers: Record<string, string>, text = body) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: text,
      });

    const bad = await post({ "x-hub-signature-256": "sha256=00" });
    expect(bad.status).toBe(401);
    expect((await post({})).status).toBe(401);
    expect((await post({ "x-gitlab-token": "wrong" })).status).toBe(401);
    expect((await manager.get("hooked")).commitDeployed).toBeUndefined();

    const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    const accepted = await post({ "x-hub-signature-256": signature });
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toEqual({ gitrepos: ["hooked"] });
    const deployed = await waitFor(
      async () => (await manager.get("hooked")).commitDeployed,
      { timeoutMs: 20_000 },
    );
    expect(deployed).toBe(await repo.head("main"));

    // GitLab's token, with GitLab's payload.
    const next = await repo.commit("main", { "cm.json": configMap("2") });
    const gitlab = JSON.stringify({ project: { git_http_url: repo.httpUrl } });
    expect((await post({ "x-gitlab-token": SECRET }, gitlab)).status).toBe(202);
    await waitFor(
      async () => (await manager.get("hooked")).commitDeployed === next,
      { timeoutMs: 20_000 },
    );

    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'flotilla_hub_git_webhooks_total{outcome="bad_signature"} 2',
    );
    expect(text).toContain(
      'flotilla_hub_git_webhooks_total{outcome="unsigned"} 1',
    );
    expect(text).toContain(
      'flotilla_hub_git_webhooks_total{outcome="accepted"} 2',
    );
    await manager.stop();
  });

  test("without a secret the path is not served; oversized bodies are refused", async () => {
    const metrics = createHubMetrics();
    await using plain = await startHttpServer({
      listen: "127.0.0.1:0",
      metrics,
      health,
    });
    const none = await fetch(`http://${plain.address}/hooks/git`, {
      method: "POST",
      body: "{}",
    });
    expect(none.status).toBe(404);
    await using http = await startHttpServer({
      listen: "127.0.0.1:0",
      metrics,
      health,
      gitWebhook: createGitWebhook({
        secret: SECRET,
        syncByUrl: () => [],
        log: pino({ level: "silent" }),
        maxBodyBytes: 10,
      }),
    });
    const large = await fetch(`http://${http.address}/hooks/git`, {
      method: "POST",
      body: "x".repeat(100),
    });
    expect(large.status).toBe(413);
  });
});
