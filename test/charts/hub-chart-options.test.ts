/**
 * The flotilla-hub chart rendered by a real helm (`helm template`, helm.ts) with each option
 * docs/install.md documents for the hub ("The hub") that hub-chart-render.test.ts does not
 * already cover, asserting what each changes: NATS credentials and prefixes, the TLS modes and
 * certificates, admin tokens, the Service, the audit, shutdown, content collection, chart
 * sources and the Prometheus of metric gates; and examples/secured.yaml, which helm lint cannot check (chart-lint.test.ts).
 */
import { describe, expect, it } from "vitest";
import { manifestOf, podOf, renderChart, renderedChart } from "./helm.js";

const CHART = "flotilla-hub";

function render(
  values: Record<string, unknown> = {},
  valuesFiles: readonly string[] = [],
) {
  return renderedChart(CHART, values, { valuesFiles });
}

describe("the flotilla-hub chart's documented options, rendered", () => {
  it("mounts the nats-setup files and passes the agents' servers and the state prefix", async () => {
    const { env, volume, mount } = podOf(
      await render({
        nats: {
          credentials: { existingSecret: "hub-nats" },
          agentServers: "tls://nats.example.com:4222",
          statePrefix: "fleet2",
        },
      }),
    );
    expect(env.get("FLOTILLA_NATS_AUTH_DIR")).toBe("/etc/flotilla/nats");
    expect(mount("nats-credentials")).toBe("/etc/flotilla/nats");
    expect(volume("nats-credentials")).toMatchObject({
      secret: { secretName: "hub-nats" },
    });
    expect(env.get("FLOTILLA_AGENT_NATS_SERVERS")).toBe(
      "tls://nats.example.com:4222",
    );
    expect(env.get("FLOTILLA_STATE_PREFIX")).toBe("fleet2");
  });

  it("serves TLS by default with the Service's names, and plaintext with tls.mode insecurePlaintext", async () => {
    const tls = podOf(
      await render({
        tls: { sans: ["hub.example.com"], clusterCertTtl: "14d" },
      }),
    ).env;
    expect(tls.get("FLOTILLA_TLS_SAN")?.split(",")).toEqual(
      expect.arrayContaining([
        "flotilla-hub.flotilla-system.svc",
        "hub.example.com",
      ]),
    );
    expect(tls.get("FLOTILLA_CLUSTER_CERT_TTL")).toBe("14d");
    expect(tls.has("FLOTILLA_INSECURE_PLAINTEXT")).toBe(false);
    const plain = podOf(
      await render({ tls: { mode: "insecurePlaintext" } }),
    ).env;
    expect(plain.get("FLOTILLA_INSECURE_PLAINTEXT")).toBe("1");
    expect(plain.has("FLOTILLA_TLS_SAN")).toBe(false);
  });

  it("uses the operator's CA and a serving certificate from Secrets", async () => {
    const { env, volume } = podOf(
      await render({
        tls: {
          ca: { existingSecret: "op-ca" },
          servingCertificate: { existingSecret: "hub-serving" },
          sans: [],
        },
      }),
    );
    expect(env.get("FLOTILLA_CA_CERT")).toBe("/etc/flotilla/ca/ca.crt");
    expect(env.get("FLOTILLA_CA_KEY")).toBe("/etc/flotilla/ca/ca.key");
    expect(volume("ca")).toMatchObject({ secret: { secretName: "op-ca" } });
    expect(env.get("FLOTILLA_TLS_CERT")).toBe("/etc/flotilla/serving/tls.crt");
    expect(volume("serving-certificate")).toMatchObject({
      secret: { secretName: "hub-serving" },
    });
  });

  it("reads admin tokens from an existing Secret, or makes one of adminTokens.tokens", async () => {
    const existing = podOf(
      await render({ adminTokens: { existingSecret: "tokens" } }),
    );
    expect(existing.env.get("FLOTILLA_HUB_ADMIN_TOKENS")).toBe(
      "/etc/flotilla/admin/admin-tokens.yaml",
    );
    expect(existing.volume("admin-tokens")).toMatchObject({
      secret: { secretName: "tokens" },
    });
    const digest = "a".repeat(64);
    const made = await render({
      adminTokens: {
        tokens: [{ name: "ci", role: "operator", tokenSha256: digest }],
      },
    });
    const secret = manifestOf(made, "Secret");
    expect(
      String(
        (secret.stringData as Record<string, unknown>)["admin-tokens.yaml"],
      ),
    ).toContain(digest);
    expect(podOf(made).volume("admin-tokens")).toMatchObject({
      secret: { secretName: secret.metadata.name },
    });
  });

  it("sets the Service's type and ports", async () => {
    const service = manifestOf(
      await render({
        service: { type: "LoadBalancer", grpcPort: 443, metricsPort: 8080 },
      }),
      "Service",
    );
    expect(service.spec).toMatchObject({
      type: "LoadBalancer",
      ports: [
        expect.objectContaining({
          name: "grpc",
          port: 443,
          targetPort: "grpc",
        }),
        expect.objectContaining({
          name: "http",
          port: 8080,
          targetPort: "http",
        }),
      ],
    });
  });

  it("passes the audit, shutdown and content collection settings", async () => {
    const { env } = podOf(
      await render({
        auditRefusals: { perPeer: 5, window: "30s", maxPeers: 50 },
        audit: { maxBytes: "2GiB" },
        shutdownTimeout: "20s",
        bundleContentGc: { interval: "5m", grace: "2h" },
      }),
    );
    expect(Object.fromEntries(env)).toMatchObject({
      FLOTILLA_AUDIT_REFUSALS_PER_PEER: "5",
      FLOTILLA_AUDIT_REFUSALS_WINDOW: "30s",
      FLOTILLA_AUDIT_REFUSALS_PEERS: "50",
      FLOTILLA_AUDIT_MAX_BYTES: "2GiB",
      FLOTILLA_SHUTDOWN_TIMEOUT: "20s",
      FLOTILLA_BUNDLE_CONTENT_GC_INTERVAL: "5m",
      FLOTILLA_BUNDLE_CONTENT_GC_GRACE: "2h",
    });
  });

  it("adds a ServiceMonitor when asked", async () => {
    const without = await render();
    expect(without.some((m) => m.kind === "ServiceMonitor")).toBe(false);
    const manifests = await render({
      metrics: { serviceMonitor: { enabled: true } },
    });
    expect(manifestOf(manifests, "ServiceMonitor").metadata.name).toBe(
      "flotilla-hub",
    );
  });

  it("gives helm a scratch volume for charts, and the chart credentials file from a Secret", async () => {
    const plain = podOf(await render());
    expect(plain.env.get("TMPDIR")).toBe("/var/cache/flotilla");
    expect(plain.env.get("FLOTILLA_CHART_FETCH_TIMEOUT")).toBe("2m");
    expect(plain.volume("chart-work")).toEqual({
      name: "chart-work",
      emptyDir: { sizeLimit: "256Mi" },
    });
    expect(plain.env.has("FLOTILLA_CHART_CREDENTIALS")).toBe(false);
    const { env, volume, mount } = podOf(
      await render({
        chartSources: {
          credentials: { existingSecret: "chart-creds", key: "creds.yaml" },
          fetchTimeout: "5m",
          workSizeLimit: "1Gi",
        },
      }),
    );
    expect(env.get("FLOTILLA_CHART_CREDENTIALS")).toBe(
      "/etc/flotilla/charts/chart-credentials.yaml",
    );
    expect(env.get("FLOTILLA_CHART_FETCH_TIMEOUT")).toBe("5m");
    expect(mount("chart-credentials")).toBe("/etc/flotilla/charts");
    expect(volume("chart-credentials")).toMatchObject({
      secret: {
        secretName: "chart-creds",
        items: [{ key: "creds.yaml", path: "chart-credentials.yaml" }],
      },
    });
    expect(volume("chart-work")).toMatchObject({
      emptyDir: { sizeLimit: "1Gi" },
    });
  });

  it("refuses a bad chart source setting, naming it", async () => {
    const bad = await renderChart(CHART, {
      chartSources: { workSizeLimit: "lots" },
    });
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.problems[0]?.message).toMatch(/chartSources\.workSizeLimit/);
  });

  it("passes the Prometheus of metric gates, its bearer token mounted from a Secret, and its limits", async () => {
    const plain = podOf(await render()).env;
    expect(plain.has("FLOTILLA_PROMETHEUS_URL")).toBe(false);
    expect(plain.has("FLOTILLA_PROMETHEUS_BEARER_TOKEN_FILE")).toBe(false);
    expect(plain.get("FLOTILLA_PROMETHEUS_TIMEOUT")).toBe("10s");
    expect(plain.get("FLOTILLA_PROMETHEUS_MAX_BYTES")).toBe("1MiB");
    const { env, volume, mount } = podOf(
      await render({
        prometheus: {
          url: "https://mon.example/prometheus",
          bearerTokenSecret: { name: "prometheus-reader", key: "reader.token" },
          timeout: "30s",
          maxBytes: "4MiB",
        },
      }),
    );
    expect(Object.fromEntries(env)).toMatchObject({
      FLOTILLA_PROMETHEUS_URL: "https://mon.example/prometheus",
      FLOTILLA_PROMETHEUS_BEARER_TOKEN_FILE: "/etc/flotilla/prometheus/token",
      FLOTILLA_PROMETHEUS_TIMEOUT: "30s",
      FLOTILLA_PROMETHEUS_MAX_BYTES: "4MiB",
    });
    expect(mount("prometheus-token")).toBe("/etc/flotilla/prometheus");
    expect(volume("prometheus-token")).toMatchObject({
      secret: {
        secretName: "prometheus-reader",
        items: [{ key: "reader.token", path: "token" }],
      },
    });
  });

  it("refuses a Prometheus bearer token without a URL, naming the value", async () => {
    const bad = await renderChart(CHART, {
      prometheus: { bearerTokenSecret: { name: "prometheus-reader" } },
    });
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.problems.map((p) => p.message).join("\n")).toMatch(
        /prometheus\.url/,
      );
  });

  it("renders examples/secured.yaml: NATS credentials, the operator's CA, token Secret, a LoadBalancer, minAvailable 1", async () => {
    const manifests = await render({}, ["examples/secured.yaml"]);
    const { env, volume } = podOf(manifests);
    expect(env.get("FLOTILLA_NATS_AUTH_DIR")).toBe("/etc/flotilla/nats");
    expect(volume("ca")).toMatchObject({
      secret: { secretName: "flotilla-ca" },
    });
    expect(volume("admin-tokens")).toMatchObject({
      secret: { secretName: "flotilla-admin-tokens" },
    });
    expect(manifestOf(manifests, "Service").spec).toMatchObject({
      type: "LoadBalancer",
    });
    const pdb = manifestOf(manifests, "PodDisruptionBudget").spec;
    expect(pdb).toMatchObject({ minAvailable: 1 });
    expect(pdb).not.toHaveProperty("maxUnavailable");
  });
});
