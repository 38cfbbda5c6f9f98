/**
 * The flotilla-agent chart rendered by a real helm (`helm template`, helm.ts) with its default
 * values and with each option docs/install.md documents ("An agent in each cluster"), asserting
 * what each changes: the hub's addresses and CA, the client certificate, the bootstrap token, the
 * state volume, the identity Secret, NATS, the backends, the upgrade drivers, the windows, RBAC
 * modes and metrics.
 */
import { describe, expect, it } from "vitest";
import {
  manifestOf,
  podOf,
  renderChart,
  renderedChart,
  type Manifest,
} from "./helm.js";

const CHART = "flotilla-agent";
const REQUIRED = {
  clusterName: "prod-eu-1",
  hub: {
    address: "hub.example.com:7070",
    tls: { ca: { existingConfigMap: "flotilla-hub-ca" } },
  },
  bootstrapToken: { existingSecret: "flotilla-agent-token" },
};

function merge(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prior = out[key];
    out[key] =
      typeof value === "object" &&
      value !== null &&
      !Array.isArray(value) &&
      typeof prior === "object" &&
      prior !== null
        ? merge(
            prior as Record<string, unknown>,
            value as Record<string, unknown>,
          )
        : value;
  }
  return out;
}

async function render(
  values: Record<string, unknown> = {},
): Promise<readonly Manifest[]> {
  return renderedChart(CHART, merge(REQUIRED, values), {
    release: "flotilla-agent",
  });
}

function kinds(manifests: readonly Manifest[]): string[] {
  return manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort();
}

describe("the flotilla-agent chart, rendered", () => {
  it("renders the Kubernetes backend by default: broad RBAC, an emptyDir state, the hub's CA and the token mounted", async () => {
    const manifests = await render();
    expect(kinds(manifests)).toEqual([
      "ClusterRole/flotilla-agent",
      "ClusterRoleBinding/flotilla-agent",
      "ConfigMap/flotilla-agent-windows",
      "Deployment/flotilla-agent",
      "Role/flotilla-agent",
      "RoleBinding/flotilla-agent",
      "Service/flotilla-agent-metrics",
      "ServiceAccount/flotilla-agent",
    ]);
    const { env, volume } = podOf(manifests);
    expect(env.get("FLOTILLA_HUB")).toBe("hub.example.com:7070");
    expect(env.get("FLOTILLA_CLUSTER_NAME")).toBe("prod-eu-1");
    expect(env.get("FLOTILLA_KUBERNETES")).toBe("in-cluster");
    expect(env.get("FLOTILLA_IDENTITY_SECRET")).toBe("flotilla-agent-identity");
    expect(env.get("FLOTILLA_TLS_CA")).toBe("/etc/flotilla/hub-ca/ca.pem");
    expect(env.get("FLOTILLA_BOOTSTRAP_TOKEN_FILE")).toBe(
      "/etc/flotilla/bootstrap/token",
    );
    expect(env.get("FLOTILLA_UPGRADE_DRIVER")).toBe("none");
    expect(env.get("FLOTILLA_APPLY_FORCE_CONFLICTS")).toBe("0");
    // The image's helm renders Helm bundles unless backend.kubernetes.helm names another.
    expect(env.has("FLOTILLA_HELM")).toBe(false);
    expect(volume("state")).toEqual({ name: "state", emptyDir: {} });
    expect(volume("hub-ca")).toMatchObject({
      configMap: {
        name: "flotilla-hub-ca",
        items: [{ key: "ca.pem", path: "ca.pem" }],
      },
    });
    expect(volume("bootstrap-token")).toMatchObject({
      secret: { secretName: "flotilla-agent-token", optional: true },
    });
    const clusterRole = manifestOf(manifests, "ClusterRole");
    expect(clusterRole.rules).toContainEqual({
      apiGroups: ["*"],
      resources: ["*"],
      verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
    });
  });

  it("gives every hub address with hub.addresses, instead of hub.address", async () => {
    const { env } = podOf(
      await render({
        hub: {
          addresses: ["hub-a.example.com:7070", "hub-b.example.com:7070"],
        },
      }),
    );
    expect(env.get("FLOTILLA_HUB")).toBe(
      "hub-a.example.com:7070,hub-b.example.com:7070",
    );
  });

  it("takes the hub's CA inline (a ConfigMap of the chart) or from a Secret with its key", async () => {
    const pem =
      "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const inline = await render({
      hub: { tls: { ca: { existingConfigMap: "", pem } } },
    });
    expect(
      manifestOf(inline, "ConfigMap", "flotilla-agent-hub-ca").data,
    ).toEqual({
      "ca.pem": pem,
    });
    expect(podOf(inline).volume("hub-ca")).toMatchObject({
      configMap: { name: "flotilla-agent-hub-ca" },
    });
    const secret = await render({
      hub: {
        tls: {
          ca: {
            existingConfigMap: "",
            existingSecret: "hub-ca",
            key: "ca.crt",
          },
        },
      },
    });
    expect(podOf(secret).volume("hub-ca")).toEqual({
      name: "hub-ca",
      secret: {
        secretName: "hub-ca",
        items: [{ key: "ca.crt", path: "ca.pem" }],
      },
    });
  });

  it("uses an operator-issued client certificate when given", async () => {
    const { env, volume } = podOf(
      await render({
        hub: { tls: { clientCertificate: { existingSecret: "agent-cert" } } },
        bootstrapToken: { existingSecret: "" },
      }),
    );
    expect(env.get("FLOTILLA_TLS_CERT")).toBe("/etc/flotilla/client/tls.crt");
    expect(env.get("FLOTILLA_TLS_KEY")).toBe("/etc/flotilla/client/tls.key");
    expect(env.has("FLOTILLA_BOOTSTRAP_TOKEN_FILE")).toBe(false);
    expect(volume("client-certificate")).toMatchObject({
      secret: { secretName: "agent-cert" },
    });
  });

  it("makes a Secret of bootstrapToken.value, and mounts its key", async () => {
    const manifests = await render({
      bootstrapToken: { existingSecret: "", value: "fl_token_value", key: "t" },
    });
    const secret = manifestOf(manifests, "Secret");
    expect(secret.stringData ?? secret.data).toBeDefined();
    const { volume } = podOf(manifests);
    expect(volume("bootstrap-token")).toMatchObject({
      secret: {
        secretName: secret.metadata.name,
        items: [{ key: "t", path: "token" }],
      },
    });
  });

  it("puts the state on a claim with persistence.enabled, or on an existing claim", async () => {
    const claimed = await render({
      persistence: { enabled: true, size: "1Gi", storageClassName: "fast" },
    });
    expect(manifestOf(claimed, "PersistentVolumeClaim").spec).toMatchObject({
      storageClassName: "fast",
      resources: { requests: { storage: "1Gi" } },
    });
    expect(podOf(claimed).volume("state")).toEqual({
      name: "state",
      persistentVolumeClaim: { claimName: "flotilla-agent-state" },
    });
    const existing = await render({
      persistence: { enabled: true, existingClaim: "mine" },
    });
    expect(existing.some((m) => m.kind === "PersistentVolumeClaim")).toBe(
      false,
    );
    expect(podOf(existing).volume("state")).toMatchObject({
      persistentVolumeClaim: { claimName: "mine" },
    });
  });

  it("names the identity Secret of backend.kubernetes.identitySecret in the env and the Role, and backend.kubernetes.helm", async () => {
    const manifests = await render({
      backend: {
        kubernetes: {
          identitySecret: "id-secret",
          forceConflicts: true,
          helm: "/opt/helm/bin/helm",
        },
      },
    });
    const { env } = podOf(manifests);
    expect(env.get("FLOTILLA_HELM")).toBe("/opt/helm/bin/helm");
    expect(env.get("FLOTILLA_IDENTITY_SECRET")).toBe("id-secret");
    expect(env.get("FLOTILLA_APPLY_FORCE_CONFLICTS")).toBe("1");
    expect(manifestOf(manifests, "Role").rules).toContainEqual({
      apiGroups: [""],
      resources: ["secrets"],
      resourceNames: ["id-secret"],
      verbs: ["get", "create", "patch", "update"],
    });
  });

  it("passes nats.url and nats.intentsPrefix", async () => {
    const { env } = podOf(
      await render({
        nats: { url: "tls://nats.example.com:4222", intentsPrefix: "fl2" },
      }),
    );
    expect(env.get("FLOTILLA_NATS")).toBe("tls://nats.example.com:4222");
    expect(env.get("FLOTILLA_INTENTS_PREFIX")).toBe("fl2");
  });

  it("runs a simulated cluster with backend.type simulated: its file mounted, a claim for its identity", async () => {
    const manifests = await render({
      backend: {
        type: "simulated",
        simulated: { cluster: { kubernetesVersion: "1.31.2" } },
      },
    });
    const { env, volume } = podOf(manifests);
    expect(env.get("FLOTILLA_SIMULATED")).toBe(
      "/etc/flotilla/simulated/cluster.yaml",
    );
    expect(env.has("FLOTILLA_KUBERNETES")).toBe(false);
    expect(volume("simulated")).toMatchObject({
      configMap: { name: "flotilla-agent-simulated" },
    });
    expect(volume("state")).toMatchObject({ persistentVolumeClaim: {} });
    const simulated = manifestOf(
      manifests,
      "ConfigMap",
      "flotilla-agent-simulated",
    );
    expect(JSON.stringify(simulated.data)).toContain("1.31.2");
  });

  it("configures the system-upgrade-controller and Cluster API drivers", async () => {
    const suc = podOf(
      await render({
        upgradeDriver: {
          type: "system-upgrade-controller",
          systemUpgradeController: { distribution: "rke2", namespace: "suc" },
        },
      }),
    ).env;
    expect(suc.get("FLOTILLA_UPGRADE_DRIVER")).toBe(
      "system-upgrade-controller",
    );
    expect(suc.get("FLOTILLA_SUC_DISTRIBUTION")).toBe("rke2");
    expect(suc.get("FLOTILLA_SUC_NAMESPACE")).toBe("suc");
    expect(suc.get("FLOTILLA_SUC_SERVER_PLAN")).toBe("flotilla-server");
    expect(suc.get("FLOTILLA_SUC_AGENT_PLAN")).toBe("flotilla-agent");
    const capi = podOf(
      await render({
        upgradeDriver: {
          type: "cluster-api",
          clusterApi: { clusterName: "prod", namespace: "capi" },
        },
      }),
    ).env;
    expect(capi.get("FLOTILLA_CAPI_CLUSTER")).toBe("prod");
    expect(capi.get("FLOTILLA_CAPI_NAMESPACE")).toBe("capi");
  });

  it("writes maintenanceWindows.maintenance into the windows ConfigMap", async () => {
    const manifests = await render({
      maintenanceWindows: {
        maintenance: {
          kubernetes: {
            schedule: { weekly: { intervalWeeks: 1, dayOfWeek: "Saturday" } },
            startTime: "22:00",
            utcOffset: "+01:00",
            durationHours: 6,
          },
        },
      },
    });
    const windows = manifestOf(
      manifests,
      "ConfigMap",
      "flotilla-agent-windows",
    );
    const text = String(
      (windows.data as Record<string, unknown>)["windows.yaml"],
    );
    expect(text).toContain("Saturday");
    expect(text).toContain("22:00");
  });

  it("grants only the listed resources with rbac.mode leastPrivilege", async () => {
    const manifests = await render({
      rbac: {
        mode: "leastPrivilege",
        leastPrivilege: {
          resources: [
            { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get"] },
          ],
        },
      },
    });
    const rules = manifestOf(manifests, "ClusterRole").rules as unknown[];
    expect(rules).toContainEqual({
      apiGroups: ["apps"],
      resources: ["deployments"],
      verbs: ["get"],
    });
    expect(JSON.stringify(rules)).not.toContain('"*"');
  });

  it("moves /metrics to metrics.port and adds a ServiceMonitor when asked", async () => {
    const manifests = await render({
      metrics: { port: 9500, serviceMonitor: { enabled: true } },
    });
    const { env, container: agent } = podOf(manifests);
    expect(env.get("FLOTILLA_METRICS_LISTEN")).toBe("0.0.0.0:9500");
    expect(agent.ports).toContainEqual(
      expect.objectContaining({ containerPort: 9500 }),
    );
    expect(manifestOf(manifests, "ServiceMonitor").metadata.name).toBe(
      "flotilla-agent",
    );
  });

  it("adds extraEnv, such as the labels the agent reports", async () => {
    const { env } = podOf(
      await render({
        extraEnv: [{ name: "FLOTILLA_LABELS", value: "env=prod" }],
      }),
    );
    expect(env.get("FLOTILLA_LABELS")).toBe("env=prod");
  });

  it("refuses a release without a cluster name, naming the value", async () => {
    const bad = await renderChart(CHART, merge(REQUIRED, { clusterName: "" }), {
      release: "flotilla-agent",
    });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.problems[0]?.message).toMatch(/clusterName/);
  });
});
