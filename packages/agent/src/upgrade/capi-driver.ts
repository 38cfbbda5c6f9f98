/**
 * The Cluster API {@link UpgradeDriver}, run against the management cluster that holds the
 * workload cluster's `Cluster` (cluster.x-k8s.io/v1beta1). Patches are server-side applies of just
 * the fields changed, forced, so other fields keep their owners.
 *
 * * ClusterClass clusters (`spec.topology` present): Full only, by setting
 *   `spec.topology.version`; the topology controller then upgrades the control plane and the
 *   MachineDeployments in order. ControlPlaneOnly and NodeImageOnly are Unsupported there (the
 *   topology moves both together, and machine images come from the ClusterClass).
 * * Other clusters: the control plane named by `spec.controlPlaneRef` (KubeadmControlPlane, or any
 *   control plane with the same `spec.version`/`status.version` contract) gets `spec.version`;
 *   once it has rolled out, for Full, each MachineDeployment of the cluster (label
 *   `cluster.x-k8s.io/cluster-name`) gets `spec.template.spec.version`. ControlPlaneOnly stops
 *   after the control plane.
 * * Node images: a MachineDeployment is a node pool and its image is its infrastructure machine
 *   template, so `target.nodeImages` entries `{pool: <MachineDeployment>, to: <template name>}`
 *   switch `spec.template.spec.infrastructureRef.name` to an existing template of the same kind
 *   (Full, or NodeImageOnly alone). Creating templates is left to the owner's tooling: their
 *   content is provider-specific (AMI, image reference).
 *
 * Its catalogue (docs/agent.md#the-version-catalogue): per pool, the machine templates of its
 * template's kind (capi-catalogue.ts); no Kubernetes versions.
 *
 * Progress counts machines at the new spec over machines wanted; each object's rollout is trusted
 * once its controller observed the new generation. Failed on `status.failureReason`/`Message`, phase
 * Failed, Ready False with severity Error, or the timeout. Tested against the local API server in
 * @flotilla/testkit, which plays the controllers (no Cluster API exists on the development machines).
 */
import type { UpgradeType } from "@flotilla/core";
import type { KubeConfig } from "@kubernetes/client-node";
import { createKubeClient, type KubeObject } from "../kube/kube-client.js";
import type { Clock } from "@flotilla/node";
import {
  CAPI_API_VERSION,
  CAPI_CLUSTER_LABEL,
  capiFacts,
  controlPlaneRollout,
  machineDeploymentPatch,
  machineDeploymentRollout,
  refAt,
  type ObjectRef,
  type Rollout,
} from "./capi-objects.js";
import type { UpgradeDriver, UpgradeOutcome } from "./driver.js";
import { capiCatalogue } from "./capi-catalogue.js";
import {
  createRunGuard,
  follow,
  normalizeVersion,
  record,
  stringAt,
  targetVersion,
  windowHold,
  type FollowOptions,
  type Observation,
} from "./kube-upgrade.js";
import type { MaintenanceSource } from "./maintenance-source.js";

/** Dependencies of {@link createCapiDriver}. */
export interface CapiDriverDeps {
  /** The management cluster. */
  readonly kubeConfig: KubeConfig;
  readonly clock: Clock;
  readonly windows: MaintenanceSource;
}

/** Options of {@link createCapiDriver}. */
export interface CapiDriverOptions extends FollowOptions {
  /** The `Cluster` object's namespace and name in the management cluster. */
  readonly namespace: string;
  readonly clusterName: string;
  /** Server-side apply field manager; default `flotilla-agent`. */
  readonly fieldManager?: string;
}

const ALL: readonly UpgradeType[] = [
  "Full",
  "ControlPlaneOnly",
  "NodeImageOnly",
];

function failed(
  reason: "InvalidTarget" | "UpgradeFailed" | "Unsupported",
  message: string,
): UpgradeOutcome {
  return { type: "Failed", reason, message };
}

/** Creates the Cluster API driver for one workload cluster. */
export function createCapiDriver(
  deps: CapiDriverDeps,
  options: CapiDriverOptions,
): UpgradeDriver {
  const { clock, windows } = deps;
  const { namespace, clusterName } = options;
  const client = createKubeClient(
    deps.kubeConfig,
    options.fieldManager ?? "flotilla-agent",
  );
  const guard = createRunGuard();
  const where = `Cluster "${namespace}/${clusterName}"`;

  const get = (ref: ObjectRef, signal?: AbortSignal) =>
    client.get({ ...ref, namespace }, signal ? { signal } : {});

  /** The Cluster, its control plane and its MachineDeployments, by name. */
  const read = async (signal?: AbortSignal) => {
    const cluster = await get(
      { apiVersion: CAPI_API_VERSION, kind: "Cluster", name: clusterName },
      signal,
    );
    if (cluster === undefined) return `${where} does not exist`;
    const cpRef = refAt(cluster, "spec", "controlPlaneRef");
    if (cpRef === undefined) return `${where} has no spec.controlPlaneRef`;
    const controlPlane = await get(cpRef, signal);
    if (controlPlane === undefined)
      return `${where}: its control plane ${cpRef.kind} "${cpRef.name}" does not exist`;
    const machineDeployments = (
      await client.list(
        {
          apiVersion: CAPI_API_VERSION,
          kind: "MachineDeployment",
          namespace,
          labelSelector: `${CAPI_CLUSTER_LABEL}=${clusterName}`,
        },
        signal ? { signal } : {},
      )
    ).sort((a, b) =>
      String(stringAt(a, "metadata", "name")).localeCompare(
        String(stringAt(b, "metadata", "name")),
      ),
    );
    const topology = record(record(cluster.spec).topology);
    return {
      cluster,
      cpRef,
      controlPlane,
      machineDeployments,
      topology: Object.keys(topology).length > 0,
    };
  };

  return {
    supports: (type) => ALL.includes(type),
    async current(callOptions = {}) {
      const seen = await read(callOptions.signal);
      if (typeof seen === "string")
        throw new Error(`Cannot read the platform facts: ${seen}`);
      return capiFacts(seen.controlPlane, seen.machineDeployments);
    },
    async catalogue(_facts, callOptions = {}) {
      const seen = await read(callOptions.signal);
      if (typeof seen === "string") return undefined;
      const signal = callOptions.signal;
      return capiCatalogue(seen.machineDeployments, (ref) =>
        client.list(
          { ...ref, namespace, labelSelector: "" },
          signal ? { signal } : {},
        ),
      );
    },
    start(request, startOptions = {}) {
      const what = `Cannot upgrade ${where} for run "${request.run}"`;
      return guard(request.run, what, async () => {
        const signal = startOptions.signal ?? new AbortController().signal;
        signal.throwIfAborted();
        const seen = await read(signal);
        if (typeof seen === "string")
          return failed("UpgradeFailed", `${what}: ${seen}`);
        const images = request.target.nodeImages ?? [];
        if (seen.topology && (request.type !== "Full" || images.length > 0))
          return failed(
            "Unsupported",
            `${what}: a ClusterClass cluster upgrades its control plane and workers together through spec.topology.version, with images from its ClusterClass (supported: Full without nodeImages)`,
          );
        const mdName = (md: KubeObject) => stringAt(md, "metadata", "name");
        const unknown = images.find(
          (i) => !seen.machineDeployments.some((md) => mdName(md) === i.pool),
        );
        if (unknown !== undefined)
          return failed(
            "InvalidTarget",
            `${what}: node pool "${unknown.pool}" is not a MachineDeployment of the cluster`,
          );
        if (request.type === "NodeImageOnly" && images.length === 0)
          return failed(
            "InvalidTarget",
            `${what}: a NodeImageOnly upgrade needs target.nodeImages (MachineDeployment and template name)`,
          );
        for (const i of images) {
          const md = seen.machineDeployments.find((m) => mdName(m) === i.pool);
          const infra = refAt(
            md,
            "spec",
            "template",
            "spec",
            "infrastructureRef",
          );
          if (
            infra === undefined ||
            (await get({ ...infra, name: i.to }, signal)) === undefined
          )
            return failed(
              "InvalidTarget",
              `${what}: MachineDeployment "${i.pool}" cannot switch to template "${i.to}": no ${infra?.kind ?? "infrastructure template"} of that name in "${namespace}"`,
            );
        }
        let version: string | undefined;
        if (request.type !== "NodeImageOnly") {
          const from = normalizeVersion(
            stringAt(seen.controlPlane, "status", "version"),
          );
          const target = targetVersion(request, from, what);
          if ("failed" in target) return target.failed;
          version = target.version;
        }
        const withControlPlane = version !== undefined;
        const workers = seen.machineDeployments.filter(
          (md) =>
            request.type === "Full" ||
            (request.type === "NodeImageOnly" &&
              images.some((i) => i.pool === mdName(md))),
        );
        const templateOf = (md: KubeObject) =>
          images.find((i) => i.pool === mdName(md))?.to;
        const rollouts = (cp: KubeObject, mds: readonly KubeObject[]) => ({
          cp: withControlPlane
            ? controlPlaneRollout(cp, version ?? "")
            : undefined,
          mds: mds
            .filter((md) => workers.some((w) => mdName(w) === mdName(md)))
            .map((md) =>
              machineDeploymentRollout(
                md,
                request.type === "Full" ? version : undefined,
                templateOf(md),
              ),
            ),
        });
        const all = (r: ReturnType<typeof rollouts>): Rollout[] =>
          r.cp === undefined ? r.mds : [r.cp, ...r.mds];
        if (
          all(rollouts(seen.controlPlane, seen.machineDeployments)).every(
            (r) => r.done,
          )
        )
          return {
            type: "Succeeded",
            message: "Already at the target",
            facts: capiFacts(seen.controlPlane, seen.machineDeployments),
          };
        const hold = windowHold(windows, request.type, clock.now());
        if (hold !== undefined) return hold;

        const apply = (object: KubeObject) =>
          client.apply(object, { force: true, signal });
        let workersPatched = false;
        const patchWorkers = async (): Promise<void> => {
          if (workersPatched || seen.topology) return;
          for (const md of workers)
            await apply(
              machineDeploymentPatch(
                md,
                namespace,
                request.type === "Full" ? version : undefined,
                templateOf(md),
              ),
            );
          workersPatched = true;
        };
        if (seen.topology)
          await apply({
            apiVersion: CAPI_API_VERSION,
            kind: "Cluster",
            metadata: { name: clusterName, namespace },
            spec: { topology: { version: `v${version ?? ""}` } },
          });
        else if (withControlPlane)
          await apply({
            apiVersion: seen.cpRef.apiVersion,
            kind: seen.cpRef.kind,
            metadata: { name: seen.cpRef.name, namespace },
            spec: { version: `v${version ?? ""}` },
          });
        else await patchWorkers();

        return follow(
          async (s): Promise<Observation> => {
            const now = await read(s);
            if (typeof now === "string")
              return {
                type: "Done",
                outcome: failed("UpgradeFailed", `${what}: ${now}`),
              };
            const r = rollouts(now.controlPlane, now.machineDeployments);
            const broken = all(r).find((x) => x.failure !== undefined);
            if (broken !== undefined)
              return {
                type: "Done",
                outcome: failed(
                  "UpgradeFailed",
                  `${what}: "${broken.name}" failed: ${broken.failure ?? ""}`,
                ),
              };
            // Workers follow the control plane (Kubernetes' version skew policy).
            if (r.cp?.done !== false) await patchWorkers();
            const list = all(r);
            if (list.every((x) => x.done))
              return {
                type: "Done",
                outcome: {
                  type: "Succeeded",
                  message: `Upgraded ${list.map((x) => `"${x.name}"`).join(", ")}${version === undefined ? "" : ` to ${version}`}`,
                  facts: capiFacts(now.controlPlane, now.machineDeployments),
                },
              };
            const next = list.find((x) => !x.done);
            const done = list.reduce((n, x) => n + x.updated, 0);
            const total = list.reduce((n, x) => n + x.replicas, 0);
            return {
              type: "Progress",
              done,
              total,
              message: `${String(done)} of ${String(total)} machine(s) updated; rolling out "${next?.name ?? ""}"`,
            };
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
