/**
 * The Kubernetes backend's part of the agent's configuration: where the cluster is
 * (`--kubernetes in-cluster` or a kubeconfig path), the agent's namespace and windows ConfigMap,
 * conflict handling, the upgrade driver and its settings, the labels, region and support plan
 * reported to the hub, the Secret that keeps the cluster's identity, and the helm binary. config.ts collects the raw values (flag or variable); this module validates them, checks
 * which settings go together, and builds the backend's configuration. The names are the ones the
 * Helm chart sets (deploy/helm/flotilla-agent/templates/deployment.yaml).
 */
import { option, text } from "@flotilla/node";
import { z } from "zod";
import type { UpgradeDriverConfig } from "../runtime/kubernetes-backend.js";
import {
  compact,
  DNS_LABEL,
  SUPPORT_PLANS,
  type SupportPlan,
} from "@flotilla/core";

export type { UpgradeDriverConfig };

/** The Kubernetes backend's configuration. */
export interface KubernetesBackendConfig {
  readonly type: "kubernetes";
  /** A kubeconfig file; undefined: in-cluster (the pod's service account). */
  readonly kubeconfig?: string;
  readonly clusterName: string;
  /** undefined: the kubeconfig context's namespace, or the service account's. */
  readonly namespace?: string;
  readonly windowsConfigMap: string;
  readonly forceConflicts: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly region?: string;
  /** The support plan reported to the hub (docs/agent.md: a cluster cannot discover it). */
  readonly supportPlan?: SupportPlan;
  readonly upgradeDriver: UpgradeDriverConfig;
  /** The Secret in the agent's namespace that keeps the cluster's identity (without --identity-dir). */
  readonly identitySecret: string;
  /** The helm binary that renders Helm bundles (a path, or a name looked up on PATH). */
  readonly helm: string;
}

/** The default of `--identity-secret`. */
export const DEFAULT_IDENTITY_SECRET = "flotilla-agent-identity";

/** The upgrade drivers `--upgrade-driver` accepts. */
export const UPGRADE_DRIVERS = [
  "none",
  "system-upgrade-controller",
  "cluster-api",
] as const;

/** The usage heading of the backends, `--kubernetes` among them. */
export const CLUSTERS_GROUP =
  "Clusters (exactly one of --kubernetes, --simulated, --simulated-fleet)";
const KUBERNETES =
  'Kubernetes backend (with --kubernetes; see docs/agent.md "Running in a cluster")';

/** The Kubernetes backend's options: flag, environment variable and usage (values stay text here). */
export const KUBERNETES_OPTIONS = {
  kubernetes: option({
    flag: "--kubernetes",
    env: "FLOTILLA_KUBERNETES",
    arg: "in-cluster|FILE",
    group: CLUSTERS_GROUP,
    help: "a real cluster: the pod's service account, or a kubeconfig file\n[FLOTILLA_KUBERNETES]",
    parse: text,
  }),
  namespace: option({
    flag: "--namespace",
    env: "FLOTILLA_NAMESPACE",
    arg: "NS",
    group: KUBERNETES,
    help: "the agent's namespace: bundle inventories, windows ConfigMap\n[FLOTILLA_NAMESPACE] (default: the kubeconfig context's, or the\nservice account's)",
    parse: text,
  }),
  windowsConfigMap: option({
    flag: "--windows-configmap",
    env: "FLOTILLA_WINDOWS_CONFIGMAP",
    arg: "NAME",
    group: KUBERNETES,
    help: "the owner's maintenance windows ConfigMap [FLOTILLA_WINDOWS_CONFIGMAP]\n(default flotilla-agent-windows)",
    parse: text,
  }),
  applyForceConflicts: option({
    flag: "--apply-force-conflicts",
    env: "FLOTILLA_APPLY_FORCE_CONFLICTS",
    group: KUBERNETES,
    help: "take over fields other managers own instead of failing\n[FLOTILLA_APPLY_FORCE_CONFLICTS=1]",
    parse: text,
  }),
  upgradeDriver: option({
    flag: "--upgrade-driver",
    env: "FLOTILLA_UPGRADE_DRIVER",
    arg: "DRIVER",
    group: KUBERNETES,
    help: "none, system-upgrade-controller (k3s, RKE2) or cluster-api\n[FLOTILLA_UPGRADE_DRIVER] (default none: no upgrades)",
    parse: text,
  }),
  sucNamespace: option({
    flag: "--suc-namespace",
    env: "FLOTILLA_SUC_NAMESPACE",
    arg: "NS",
    group: KUBERNETES,
    help: "the Plans' namespace [FLOTILLA_SUC_NAMESPACE] (default system-upgrade)",
    parse: text,
  }),
  sucServerPlan: option({
    flag: "--suc-server-plan",
    env: "FLOTILLA_SUC_SERVER_PLAN",
    arg: "NAME",
    group: KUBERNETES,
    help: "[FLOTILLA_SUC_SERVER_PLAN] (default server-plan)",
    parse: text,
  }),
  sucAgentPlan: option({
    flag: "--suc-agent-plan",
    env: "FLOTILLA_SUC_AGENT_PLAN",
    arg: "NAME",
    group: KUBERNETES,
    help: "[FLOTILLA_SUC_AGENT_PLAN] (default agent-plan)",
    parse: text,
  }),
  sucDistribution: option({
    flag: "--suc-distribution",
    env: "FLOTILLA_SUC_DISTRIBUTION",
    arg: "k3s|rke2",
    group: KUBERNETES,
    help: "required with system-upgrade-controller [FLOTILLA_SUC_DISTRIBUTION]",
    parse: text,
  }),
  capiCluster: option({
    flag: "--capi-cluster",
    env: "FLOTILLA_CAPI_CLUSTER",
    arg: "NAME",
    group: KUBERNETES,
    help: "the Cluster to upgrade, required with cluster-api [FLOTILLA_CAPI_CLUSTER]",
    parse: text,
  }),
  capiNamespace: option({
    flag: "--capi-namespace",
    env: "FLOTILLA_CAPI_NAMESPACE",
    arg: "NS",
    group: KUBERNETES,
    help: "its namespace [FLOTILLA_CAPI_NAMESPACE] (default default)",
    parse: text,
  }),
  labels: option({
    flag: "--label",
    env: "FLOTILLA_LABELS",
    arg: "KEY=VALUE",
    repeatable: true,
    group: KUBERNETES,
    help: 'a label reported to the hub; repeatable [FLOTILLA_LABELS="k=v,k=v"]',
    parse: text,
  }),
  region: option({
    flag: "--region",
    env: "FLOTILLA_REGION",
    arg: "REGION",
    group: KUBERNETES,
    help: "the region reported to the hub [FLOTILLA_REGION]",
    parse: text,
  }),
  supportPlan: option({
    flag: "--support-plan",
    env: "FLOTILLA_SUPPORT_PLAN",
    arg: "PLAN",
    group: KUBERNETES,
    help: "the cluster's support plan reported to the hub: KubernetesOfficial or\nAKSLongTermSupport [FLOTILLA_SUPPORT_PLAN] (default KubernetesOfficial)",
    parse: text,
  }),
  identitySecret: option({
    flag: "--identity-secret",
    env: "FLOTILLA_IDENTITY_SECRET",
    arg: "NAME",
    group: KUBERNETES,
    help: "the Secret in NS that keeps the cluster's identity, unless --identity-dir\nis given [FLOTILLA_IDENTITY_SECRET] (default flotilla-agent-identity)",
    parse: text,
  }),
  helm: option({
    flag: "--helm",
    env: "FLOTILLA_HELM",
    arg: "PATH",
    group: KUBERNETES,
    help: "the helm binary (3.17 or later) that renders Helm bundles\n(docs/bundles.md#helm-bundles) [FLOTILLA_HELM] (default helm on PATH)",
    parse: text,
  }),
};

/** Keys of {@link KUBERNETES_OPTIONS}. */
export type KubernetesKey = keyof typeof KUBERNETES_OPTIONS;

const SUC_KEYS = [
  "sucNamespace",
  "sucServerPlan",
  "sucAgentPlan",
  "sucDistribution",
] as const;
const CAPI_KEYS = ["capiCluster", "capiNamespace"] as const;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const dnsLabel = z
  .string()
  .max(63, "must be at most 63 characters")
  .regex(DNS_LABEL, "must be a DNS label (lower-case letters, digits, '-')");
const resourceName = z
  .string()
  .max(253, "must be at most 253 characters")
  .regex(
    DNS_SUBDOMAIN,
    "must be a Kubernetes object name (lower-case letters, digits, '-', '.')",
  );

// Kubernetes label syntax: optional DNS-subdomain prefix, a name of up to 63 characters.
const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const LABEL_VALUE = /^(([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?)$/;

/** `k=v` pairs (each flag value may hold several separated by commas) → labels. */
const labels = z
  .array(z.string())
  .transform((pairs, ctx): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const pair of pairs
      .flatMap((p) => p.split(","))
      .map((p) => p.trim())) {
      if (pair === "") continue;
      const at = pair.indexOf("=");
      const key = at < 0 ? pair : pair.slice(0, at);
      const value = at < 0 ? "" : pair.slice(at + 1);
      const slash = key.lastIndexOf("/");
      const prefix = slash < 0 ? undefined : key.slice(0, slash);
      const name = slash < 0 ? key : key.slice(slash + 1);
      const problem =
        at < 0
          ? "must be KEY=VALUE"
          : prefix !== undefined &&
              (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))
            ? "the key's prefix must be a DNS subdomain"
            : name.length > 63 || !LABEL_NAME.test(name)
              ? "the key must be a label name (up to 63 letters, digits, '-', '_', '.'; alphanumeric at both ends)"
              : value.length > 63 || !LABEL_VALUE.test(value)
                ? "the value must be a label value (up to 63 letters, digits, '-', '_', '.'; alphanumeric at both ends)"
                : key in out
                  ? "the key is given twice"
                  : undefined;
      if (problem !== undefined) {
        ctx.addIssue({
          code: "custom",
          message: `${JSON.stringify(pair)}: ${problem}`,
        });
        continue;
      }
      out[key] = value;
    }
    return out;
  });

const schema = z.object({
  kubernetes: z.string().optional(),
  namespace: dnsLabel.optional(),
  windowsConfigMap: resourceName.default("flotilla-agent-windows"),
  applyForceConflicts: z
    .stringbool({ error: "must be 1/true/yes/on or 0/false/no/off" })
    .default(false),
  upgradeDriver: z
    .enum(UPGRADE_DRIVERS, {
      error: `must be one of ${UPGRADE_DRIVERS.join(", ")}`,
    })
    .default("none"),
  sucNamespace: dnsLabel.optional(),
  sucServerPlan: resourceName.optional(),
  sucAgentPlan: resourceName.optional(),
  sucDistribution: z
    .enum(["k3s", "rke2"], { error: "must be k3s or rke2" })
    .optional(),
  capiCluster: resourceName.optional(),
  capiNamespace: dnsLabel.default("default"),
  labels: labels.default({}),
  region: z.string().min(1).max(63, "must be at most 63 characters").optional(),
  supportPlan: z
    .enum(SUPPORT_PLANS, {
      error: `must be one of ${SUPPORT_PLANS.join(", ")}`,
    })
    .optional(),
  identitySecret: resourceName.default(DEFAULT_IDENTITY_SECRET),
  helm: z.string().min(1).default("helm"),
});

/** What {@link parseKubernetesSettings} is given: raw values and how to name where they came from. */
export interface KubernetesRaw {
  readonly values: Partial<Record<Exclude<KubernetesKey, "labels">, string>>;
  /** Every `--label` value, or FLOTILLA_LABELS's one; empty when unset. */
  readonly labels: readonly string[];
  /** `--flag "value"` or `VARIABLE "value"`. */
  readonly describe: (key: KubernetesKey) => string;
}

/** Whether any Kubernetes-only setting was given (they need `--kubernetes`). */
export function givenKubernetesSettings(raw: KubernetesRaw): KubernetesKey[] {
  const keys = Object.keys(KUBERNETES_OPTIONS) as KubernetesKey[];
  return keys.filter((k) =>
    k === "labels" ? raw.labels.length > 0 : raw.values[k] !== undefined,
  );
}

/**
 * Validates the settings of a `--kubernetes` backend; `clusterName` is the validated
 * `--cluster-name` (undefined when missing or invalid: config.ts reports that, and no backend is
 * returned).
 */
export function parseKubernetesSettings(
  raw: KubernetesRaw,
  clusterName: string | undefined,
):
  | { readonly problems: readonly string[] }
  | { readonly backend: KubernetesBackendConfig } {
  const parsed = schema.safeParse({ ...raw.values, labels: raw.labels });
  const problems: string[] = [];
  if (!parsed.success)
    for (const issue of parsed.error.issues) {
      const key = issue.path[0] as KubernetesKey;
      problems.push(`${raw.describe(key)}: ${issue.message}`);
    }
  const driver = parsed.success ? parsed.data.upgradeDriver : undefined;
  const misplaced = (keys: readonly KubernetesKey[], applies: string): void => {
    for (const key of keys)
      if (raw.values[key as Exclude<KubernetesKey, "labels">] !== undefined)
        problems.push(
          `${raw.describe(key)}: applies only with --upgrade-driver ${applies} (${raw.values.upgradeDriver === undefined ? "the default is none" : raw.describe("upgradeDriver")})`,
        );
  };
  if (driver !== undefined && driver !== "system-upgrade-controller")
    misplaced(SUC_KEYS, "system-upgrade-controller");
  if (driver !== undefined && driver !== "cluster-api")
    misplaced(CAPI_KEYS, "cluster-api");
  if (
    driver === "system-upgrade-controller" &&
    raw.values.sucDistribution === undefined
  )
    problems.push(
      `${raw.describe("upgradeDriver")}: needs --suc-distribution k3s|rke2 (FLOTILLA_SUC_DISTRIBUTION): the Plans pin releases such as "v1.31.2+k3s1"`,
    );
  if (driver === "cluster-api" && raw.values.capiCluster === undefined)
    problems.push(
      `${raw.describe("upgradeDriver")}: needs --capi-cluster NAME (FLOTILLA_CAPI_CLUSTER), the Cluster object to upgrade`,
    );
  if (!parsed.success || problems.length > 0 || clusterName === undefined)
    return { problems };
  const v = parsed.data;
  const location = v.kubernetes ?? "in-cluster";
  const upgradeDriver: UpgradeDriverConfig =
    v.upgradeDriver === "system-upgrade-controller"
      ? {
          type: v.upgradeDriver,
          distribution: v.sucDistribution ?? "k3s",
          ...compact({
            namespace: v.sucNamespace,
            serverPlanName: v.sucServerPlan,
            agentPlanName: v.sucAgentPlan,
          }),
        }
      : v.upgradeDriver === "cluster-api"
        ? {
            type: v.upgradeDriver,
            clusterName: v.capiCluster ?? "",
            namespace: v.capiNamespace,
          }
        : { type: "none" };
  return {
    backend: {
      type: "kubernetes",
      ...(location === "in-cluster" ? {} : { kubeconfig: location }),
      clusterName,
      ...compact({ namespace: v.namespace }),
      windowsConfigMap: v.windowsConfigMap,
      forceConflicts: v.applyForceConflicts,
      labels: v.labels,
      ...compact({ region: v.region, supportPlan: v.supportPlan }),
      upgradeDriver,
      identitySecret: v.identitySecret,
      helm: v.helm,
    },
  };
}
