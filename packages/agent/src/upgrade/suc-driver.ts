/**
 * The system-upgrade-controller {@link UpgradeDriver} for k3s and RKE2 clusters. It applies (server-
 * side apply, forced: the agent owns these Plans) the two Plans the k3s and RKE2 documentation
 * describe in `upgrade.cattle.io/v1`: a server Plan selecting control-plane nodes
 * (`node-role.kubernetes.io/control-plane: "true"`) and an agent Plan selecting the other nodes that
 * waits for the server Plan through its `prepare` container. Both are pinned to the target release
 * with `spec.version` (the Kubernetes version plus the distribution's suffix, "v1.31.2+k3s1").
 *
 * It then follows the cluster: each Plan's `Complete` condition (trusted only once the Plan's
 * `status.latestVersion` is the pinned release) and every node's `status.nodeInfo.kubeletVersion`.
 * Progress is upgraded nodes over selected nodes; Succeeded when every selected node runs the
 * target and each applied Plan is Complete; Failed on a Plan's `Validated=False` or
 * `Complete=False` with reason JobFailed, or on the timeout. Full applies both Plans,
 * ControlPlaneOnly the server Plan only; NodeImageOnly is not something these Plans do
 * (k3s/RKE2 nodes carry no image version), so it ends `Failed: Unsupported`.
 *
 * Its catalogue (docs/agent.md#the-version-catalogue) is the release each channel Plan resolved
 * (suc-catalogue.ts).
 *
 * Tested against the local API server in @flotilla/testkit (there is no real cluster on the
 * development machines), which plays the controller by setting Plan and Node statuses.
 */
import type { UpgradeType } from "@flotilla/core";
import type { KubeConfig } from "@kubernetes/client-node";
import { createKubeClient } from "../kube/kube-client.js";
import type { Clock } from "@flotilla/node";
import type { UpgradeDriver } from "./driver.js";
import {
  conditionOf,
  createRunGuard,
  follow,
  stringAt,
  targetVersion,
  unsupported,
  windowHold,
  type FollowOptions,
  type JsonRecord,
  type Observation,
} from "./kube-upgrade.js";
import type { MaintenanceSource } from "./maintenance-source.js";
import { sucCatalogue } from "./suc-catalogue.js";
import {
  CONTROL_PLANE_LABEL,
  nodeViews,
  progressOf,
  sucFacts as facts,
  type NodeView,
} from "./suc-nodes.js";

export { CONTROL_PLANE_LABEL } from "./suc-nodes.js";

/** Dependencies of {@link createSucDriver}. */
export interface SucDriverDeps {
  /** Where the cluster is (in-cluster or a kubeconfig; see kube/kube-config.ts). */
  readonly kubeConfig: KubeConfig;
  readonly clock: Clock;
  readonly windows: MaintenanceSource;
}

/** Options of {@link createSucDriver}. */
export interface SucDriverOptions extends FollowOptions {
  readonly distribution: "k3s" | "rke2";
  /** Namespace of the Plans; default `system-upgrade`. */
  readonly namespace?: string;
  /** Default `server-plan` and `agent-plan`. */
  readonly serverPlanName?: string;
  readonly agentPlanName?: string;
  /** Appended to "v1.31.2"; default "+k3s1" or "+rke2r1". */
  readonly releaseSuffix?: string;
  /** The upgrade image; default `rancher/k3s-upgrade` or `rancher/rke2-upgrade`. */
  readonly upgradeImage?: string;
  /** Default `system-upgrade`, the controller's own service account. */
  readonly serviceAccountName?: string;
  /** Nodes upgraded at once per Plan; default 1. */
  readonly concurrency?: number;
  /** For messages. */
  readonly clusterName?: string;
  /** Server-side apply field manager owning the Plans; default `flotilla-agent`. */
  readonly fieldManager?: string;
}

const SUPPORTED: readonly UpgradeType[] = ["Full", "ControlPlaneOnly"];

/** Creates the system-upgrade-controller driver. */
export function createSucDriver(
  deps: SucDriverDeps,
  options: SucDriverOptions,
): UpgradeDriver {
  const { clock, windows } = deps;
  const client = createKubeClient(
    deps.kubeConfig,
    options.fieldManager ?? "flotilla-agent",
  );
  const namespace = options.namespace ?? "system-upgrade";
  const serverPlan = options.serverPlanName ?? "server-plan";
  const agentPlan = options.agentPlanName ?? "agent-plan";
  const rke2 = options.distribution === "rke2";
  const suffix = options.releaseSuffix ?? (rke2 ? "+rke2r1" : "+k3s1");
  const image =
    options.upgradeImage ??
    (rke2 ? "rancher/rke2-upgrade" : "rancher/k3s-upgrade");
  const cluster = options.clusterName ?? "this cluster";
  const guard = createRunGuard();

  const listNodes = async (signal?: AbortSignal): Promise<NodeView[]> =>
    nodeViews(
      await client.list(
        { apiVersion: "v1", kind: "Node", namespace: "", labelSelector: "" },
        signal ? { signal } : {},
      ),
    );

  const planObject = (
    name: string,
    role: "server" | "agent",
    release: string,
    run: string,
  ): JsonRecord => ({
    apiVersion: "upgrade.cattle.io/v1",
    kind: "Plan",
    metadata: {
      name,
      namespace,
      labels: { "app.kubernetes.io/managed-by": "flotilla-agent" },
      annotations: { "flotilla.dev/run": run },
    },
    spec: {
      concurrency: options.concurrency ?? 1,
      cordon: true,
      serviceAccountName: options.serviceAccountName ?? "system-upgrade",
      nodeSelector: {
        matchExpressions: [
          role === "server"
            ? { key: CONTROL_PLANE_LABEL, operator: "In", values: ["true"] }
            : { key: CONTROL_PLANE_LABEL, operator: "DoesNotExist" },
        ],
      },
      ...(role === "agent"
        ? { prepare: { image, args: ["prepare", serverPlan] } }
        : {}),
      upgrade: { image },
      version: release,
    },
  });

  /** Failed when the Plan reports a failure for `release`; otherwise whether it is Complete. */
  const planState = (
    plan: JsonRecord | undefined,
    name: string,
    release: string,
  ): { failed: string } | { complete: boolean } => {
    if (plan === undefined)
      return { failed: `Plan "${namespace}/${name}" was deleted` };
    const validated = conditionOf(plan, "Validated");
    if (validated?.status === "False")
      return {
        failed: `Plan "${name}" is not valid: ${validated.message || validated.reason}`,
      };
    if (stringAt(plan, "status", "latestVersion") !== release)
      return { complete: false };
    const complete = conditionOf(plan, "Complete");
    if (complete?.status === "False" && /fail|error/i.test(complete.reason))
      return {
        failed: `Plan "${name}" failed: ${complete.message || complete.reason}`,
      };
    return { complete: complete?.status === "True" };
  };

  return {
    supports: (type) => SUPPORTED.includes(type),
    async current(callOptions = {}) {
      return facts(await listNodes(callOptions.signal));
    },
    async catalogue(platform, callOptions = {}) {
      const plans = await client.list(
        {
          apiVersion: "upgrade.cattle.io/v1",
          kind: "Plan",
          namespace,
          labelSelector: "",
        },
        callOptions.signal ? { signal: callOptions.signal } : {},
      );
      return sucCatalogue(plans, platform);
    },
    start(request, startOptions = {}) {
      const what = `Cannot upgrade cluster "${cluster}" for run "${request.run}"`;
      return guard(request.run, what, async () => {
        const signal = startOptions.signal ?? new AbortController().signal;
        signal.throwIfAborted();
        if (!SUPPORTED.includes(request.type))
          return unsupported(
            request.type,
            what,
            "system-upgrade-controller",
            SUPPORTED,
          );
        const before = await listNodes(signal);
        const target = targetVersion(
          request,
          facts(before).kubernetesVersion,
          what,
        );
        if ("failed" in target) return target.failed;
        const { version } = target;
        const release = `v${version}${suffix}`;
        const full = request.type === "Full";
        const scoped = (nodes: readonly NodeView[]): NodeView[] =>
          full ? [...nodes] : nodes.filter((n) => n.role === "server");
        // Nothing to change needs no window: the member is done whatever the hour.
        if (
          scoped(before).length > 0 &&
          scoped(before).every((n) => n.version === version)
        )
          return {
            type: "Succeeded",
            message: "Already at the target",
            facts: facts(before),
          };
        const hold = windowHold(windows, request.type, clock.now());
        if (hold !== undefined) return hold;
        const plans: [string, "server" | "agent"][] = full
          ? [
              [serverPlan, "server"],
              [agentPlan, "agent"],
            ]
          : [[serverPlan, "server"]];
        for (const [name, role] of plans)
          await client.apply(planObject(name, role, release, request.run), {
            force: true,
            signal,
          });
        return follow(
          async (s): Promise<Observation> => {
            const nodes = scoped(await listNodes(s));
            for (const [name] of plans) {
              const plan = await client.get(
                {
                  apiVersion: "upgrade.cattle.io/v1",
                  kind: "Plan",
                  namespace,
                  name,
                },
                { signal: s },
              );
              const state = planState(plan, name, release);
              if ("failed" in state)
                return {
                  type: "Done",
                  outcome: {
                    type: "Failed",
                    reason: "UpgradeFailed",
                    message: `${what}: ${state.failed}`,
                  },
                };
              if (!state.complete && nodes.every((n) => n.version === version))
                return progressOf(
                  nodes,
                  version,
                  `waiting for Plan "${name}" to be Complete`,
                );
            }
            if (nodes.length > 0 && nodes.every((n) => n.version === version))
              return {
                type: "Done",
                outcome: {
                  type: "Succeeded",
                  message: `Upgraded ${String(nodes.length)} node(s) to ${release}`,
                  facts: facts(await listNodes(s)),
                },
              };
            return progressOf(nodes, version, undefined);
          },
          {
            clock,
            signal,
            what,
            onProgress: startOptions.onProgress,
            ...options,
          },
        );
      });
    },
  };
}
