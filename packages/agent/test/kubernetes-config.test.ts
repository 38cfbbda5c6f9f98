// flotilla-agent's Kubernetes backend settings: the names the Helm chart sets, what goes
// with what, and every problem named by its flag or variable and the value.
import { describe, expect, test } from "vitest";
import { parseAgentConfig, type ConfigResult } from "../src/config/config.js";

const PLAIN = ["--insecure-plaintext"];

function problems(result: ConfigResult): readonly string[] {
  return result.type === "invalid" ? [...result.problems].sort() : [];
}

describe("the Kubernetes backend's configuration", () => {
  test("--helm / FLOTILLA_HELM names the helm that renders Helm bundles; only with --kubernetes", () => {
    const kube = ["--kubernetes", "in-cluster", "--cluster-name", "edge-1"];
    expect(
      parseAgentConfig([...PLAIN, ...kube, "--helm", "/opt/helm"], {
        FLOTILLA_HELM: "/usr/bin/helm",
      }),
    ).toMatchObject({ config: { backend: { helm: "/opt/helm" } } });
    expect(
      parseAgentConfig([...PLAIN, ...kube], { FLOTILLA_HELM: "/usr/bin/helm" }),
    ).toMatchObject({ config: { backend: { helm: "/usr/bin/helm" } } });
    expect(
      problems(
        parseAgentConfig(
          [...PLAIN, "--simulated", "c.yaml", "--helm", "x"],
          {},
        ),
      ),
    ).toEqual([
      '--helm "x": applies only with --kubernetes (FLOTILLA_KUBERNETES)',
    ]);
  });

  test("in-cluster from the chart's variables, with defaults", () => {
    const parsed = parseAgentConfig(PLAIN, {
      FLOTILLA_KUBERNETES: "in-cluster",
      FLOTILLA_CLUSTER_NAME: "edge-1",
    });
    expect(parsed).toMatchObject({
      type: "config",
      config: {
        backend: {
          type: "kubernetes",
          clusterName: "edge-1",
          windowsConfigMap: "flotilla-agent-windows",
          forceConflicts: false,
          labels: {},
          upgradeDriver: { type: "none" },
          helm: "helm",
        },
      },
    });
    if (parsed.type !== "config") throw new Error("not a config");
    expect(parsed.config.backend).not.toHaveProperty("kubeconfig");
    expect(parsed.config.backend).not.toHaveProperty("namespace");
  });

  test("a kubeconfig path, namespace, force, labels (flags repeat) and region", () => {
    const parsed = parseAgentConfig(
      [
        ...PLAIN,
        "--kubernetes",
        "/home/me/.kube/config",
        "--cluster-name",
        "edge-1",
        "--namespace",
        "flotilla",
        "--windows-configmap",
        "owner-windows",
        "--apply-force-conflicts",
        "--label",
        "env=prod",
        "--label",
        "example.com/tier=gold,zone=b",
        "--region",
        "eu-west-1",
        "--support-plan",
        "AKSLongTermSupport",
      ],
      // The flags win over the variable.
      {
        FLOTILLA_LABELS: "env=dev",
        FLOTILLA_SUPPORT_PLAN: "KubernetesOfficial",
      },
    );
    expect(parsed).toMatchObject({
      type: "config",
      config: {
        backend: {
          type: "kubernetes",
          kubeconfig: "/home/me/.kube/config",
          namespace: "flotilla",
          windowsConfigMap: "owner-windows",
          forceConflicts: true,
          labels: { env: "prod", "example.com/tier": "gold", zone: "b" },
          region: "eu-west-1",
          supportPlan: "AKSLongTermSupport",
        },
      },
    });
    expect(
      parseAgentConfig(
        [...PLAIN, "--kubernetes", "in-cluster", "--cluster-name", "c"],
        { FLOTILLA_LABELS: "env=dev, team=a" },
      ),
    ).toMatchObject({
      config: { backend: { labels: { env: "dev", team: "a" } } },
    });
  });

  test("the system-upgrade-controller and Cluster API drivers with their settings", () => {
    const suc = parseAgentConfig(PLAIN, {
      FLOTILLA_KUBERNETES: "in-cluster",
      FLOTILLA_CLUSTER_NAME: "edge-1",
      FLOTILLA_UPGRADE_DRIVER: "system-upgrade-controller",
      FLOTILLA_SUC_NAMESPACE: "system-upgrade",
      FLOTILLA_SUC_SERVER_PLAN: "flotilla-server",
      FLOTILLA_SUC_AGENT_PLAN: "flotilla-agent",
      FLOTILLA_SUC_DISTRIBUTION: "rke2",
    });
    expect(suc).toMatchObject({
      config: {
        backend: {
          upgradeDriver: {
            type: "system-upgrade-controller",
            distribution: "rke2",
            namespace: "system-upgrade",
            serverPlanName: "flotilla-server",
            agentPlanName: "flotilla-agent",
          },
        },
      },
    });
    const capi = parseAgentConfig(
      [
        ...PLAIN,
        "--kubernetes",
        "in-cluster",
        "--cluster-name",
        "edge-1",
        "--upgrade-driver",
        "cluster-api",
        "--capi-cluster",
        "workload-7",
      ],
      {},
    );
    expect(capi).toMatchObject({
      config: {
        backend: {
          upgradeDriver: {
            type: "cluster-api",
            clusterName: "workload-7",
            namespace: "default",
          },
        },
      },
    });
  });

  test("needs a cluster name, and the driver's required settings", () => {
    expect(
      problems(parseAgentConfig([...PLAIN, "--kubernetes", "in-cluster"], {})),
    ).toEqual([
      `--kubernetes "in-cluster": needs --cluster-name NAME (FLOTILLA_CLUSTER_NAME), the cluster's name in the fleet`,
    ]);
    expect(
      problems(
        parseAgentConfig(PLAIN, {
          FLOTILLA_KUBERNETES: "in-cluster",
          FLOTILLA_CLUSTER_NAME: "c",
          FLOTILLA_UPGRADE_DRIVER: "system-upgrade-controller",
        }),
      ),
    ).toEqual([
      `FLOTILLA_UPGRADE_DRIVER "system-upgrade-controller": needs --suc-distribution k3s|rke2 (FLOTILLA_SUC_DISTRIBUTION): the Plans pin releases such as "v1.31.2+k3s1"`,
    ]);
    expect(
      problems(
        parseAgentConfig(
          [...PLAIN, "--kubernetes", "in-cluster", "--cluster-name", "c"],
          { FLOTILLA_UPGRADE_DRIVER: "cluster-api" },
        ),
      ),
    ).toEqual([
      `FLOTILLA_UPGRADE_DRIVER "cluster-api": needs --capi-cluster NAME (FLOTILLA_CAPI_CLUSTER), the Cluster object to upgrade`,
    ]);
  });

  test("bad values are reported at once, each with its flag or variable and value", () => {
    expect(
      problems(
        parseAgentConfig(
          [
            ...PLAIN,
            "--kubernetes",
            "in-cluster",
            "--cluster-name",
            "c",
            "--upgrade-driver",
            "kured",
            "--namespace",
            "Not_A_Namespace",
            "--label",
            "novalue",
          ],
          {
            FLOTILLA_APPLY_FORCE_CONFLICTS: "maybe",
            FLOTILLA_SUPPORT_PLAN: "LTS",
          },
        ),
      ),
    ).toEqual([
      `--label "novalue": "novalue": must be KEY=VALUE`,
      `--namespace "Not_A_Namespace": must be a DNS label (lower-case letters, digits, '-')`,
      `--upgrade-driver "kured": must be one of none, system-upgrade-controller, cluster-api`,
      `FLOTILLA_APPLY_FORCE_CONFLICTS "maybe": must be 1/true/yes/on or 0/false/no/off`,
      `FLOTILLA_SUPPORT_PLAN "LTS": must be one of KubernetesOfficial, AKSLongTermSupport`,
    ]);
    expect(
      problems(
        parseAgentConfig(
          [...PLAIN, "--kubernetes", "in-cluster", "--cluster-name", "c"],
          { FLOTILLA_LABELS: "env=prod,env=dev,bad key=x" },
        ),
      ),
    ).toEqual([
      `FLOTILLA_LABELS "env=prod,env=dev,bad key=x": "bad key=x": the key must be a label name (up to 63 letters, digits, '-', '_', '.'; alphanumeric at both ends)`,
      `FLOTILLA_LABELS "env=prod,env=dev,bad key=x": "env=dev": the key is given twice`,
    ]);
  });

  test("refuses settings that do not apply: another backend, another driver", () => {
    expect(
      problems(
        parseAgentConfig(
          [...PLAIN, "--simulated", "c.yaml", "--kubernetes", "in-cluster"],
          {},
        ),
      ),
    ).toEqual([
      `--kubernetes "in-cluster" and --simulated "c.yaml": choose one`,
    ]);
    expect(
      problems(
        parseAgentConfig([...PLAIN, "--simulated", "c.yaml"], {
          FLOTILLA_NAMESPACE: "flotilla",
          FLOTILLA_LABELS: "env=prod",
        }),
      ),
    ).toEqual([
      `FLOTILLA_LABELS "env=prod": applies only with --kubernetes (FLOTILLA_KUBERNETES)`,
      `FLOTILLA_NAMESPACE "flotilla": applies only with --kubernetes (FLOTILLA_KUBERNETES)`,
    ]);
    expect(
      problems(
        parseAgentConfig(
          [
            ...PLAIN,
            "--kubernetes",
            "in-cluster",
            "--cluster-name",
            "c",
            "--suc-distribution",
            "k3s",
            "--capi-cluster",
            "w",
          ],
          {},
        ),
      ),
    ).toEqual([
      `--capi-cluster "w": applies only with --upgrade-driver cluster-api (the default is none)`,
      `--suc-distribution "k3s": applies only with --upgrade-driver system-upgrade-controller (the default is none)`,
    ]);
  });
});

test("--help names every Kubernetes flag and its variable", async () => {
  const { USAGE } = await import("../src/usage.js");
  const { KUBERNETES_OPTIONS } =
    await import("../src/config/config-kubernetes.js");
  for (const s of Object.values(KUBERNETES_OPTIONS)) {
    expect(USAGE).toContain(`${s.flag} `);
    expect(USAGE).toContain(s.env);
  }
});
