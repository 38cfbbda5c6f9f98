/**
 * AdminService: clusters and cluster groups. Every request is validated before anything is read
 * or written: malformed fields are INVALID_ARGUMENT with their path, unknown names NOT_FOUND.
 */
import {
  FlotillaError,
  groupsOfCluster,
  parseLabels,
  parseSelectorString,
  type LabelSelector,
  type Problem,
  compact,
} from "@flotilla/core";
import {
  bundleClusterToWire,
  clusterFactsToWire,
  type wire,
} from "@flotilla/protocol";
import type { ClusterBundle } from "../bundles/bundle-views.js";
import type {
  ClusterRegistry,
  ClusterStatus,
  ConnectionState,
} from "../clusters/cluster-registry.js";
import type { ClusterGroups, StoredGroup } from "../clusters/cluster-groups.js";
import type { IntentWriter } from "../intents/intent-writer.js";
import { nameProblem } from "../names.js";
import { audited, unary, type AuditDeps } from "./unary.js";
import { paginate } from "./pages.js";

type Handlers = wire.AdminServiceHandlers;

const CONNECTION: Record<ConnectionState, wire.ConnectionState> = {
  NeverConnected: "CONNECTION_STATE_NEVER_CONNECTED",
  Connected: "CONNECTION_STATE_CONNECTED",
  Disconnected: "CONNECTION_STATE_DISCONNECTED",
  Unreachable: "CONNECTION_STATE_UNREACHABLE",
};

/** Throws INVALID_ARGUMENT when `name` is not a valid object name. */
export function requireName(name: unknown, path: string, what: string): string {
  const problem = nameProblem(name, path);
  if (problem !== undefined) throw FlotillaError.invalid(what, [problem]);
  return name as string;
}

export interface FleetHandlerDeps extends AuditDeps {
  readonly registry: ClusterRegistry;
  readonly groups: ClusterGroups;
  readonly intents: IntentWriter;
  /**
   * Revokes a removed cluster's identity: its certificates and its NATS users
   * (cluster-identities.ts). Absent: the hub registers no agents (plaintext).
   */
  readonly forgetIdentity?: (cluster: string) => Promise<void>;
  /** Every bundle that targets the cluster, with its state there (GetCluster); absent: none. */
  readonly bundlesOn?: (cluster: string) => Promise<readonly ClusterBundle[]>;
}

export function fleetHandlers(
  deps: FleetHandlerDeps,
): Pick<
  Handlers,
  | "ListClusters"
  | "GetCluster"
  | "LabelCluster"
  | "RemoveCluster"
  | "CreateClusterGroup"
  | "UpdateClusterGroup"
  | "GetClusterGroup"
  | "ListClusterGroups"
  | "DeleteClusterGroup"
> {
  const clusterToWire = async (
    status: ClusterStatus,
  ): Promise<wire.Cluster> => {
    const { record, cluster } = status;
    const { intent } = await deps.intents.current(record.name);
    return {
      name: record.name,
      labels: { ...cluster.labels },
      ...compact({ updateGroup: record.updateGroup }),
      clusterGroups: groupsOfCluster(cluster, deps.groups.all()).map(
        (g) => g.name,
      ),
      facts: clusterFactsToWire({ ...record.facts, labels: cluster.labels }),
      connection: CONNECTION[status.connection],
      agentVersion: record.agentVersion,
      registeredAtMs: record.registeredAtMs,
      // A cluster whose agent never connected was never seen: the CLI says "never".
      ...(status.connection === "NeverConnected"
        ? {}
        : { lastSeenAtMs: status.lastSeenAtMs }),
      intentGeneration: intent.generation,
      appliedGeneration: status.appliedGeneration,
      revision: status.revision,
      paused: record.paused === true,
    };
  };

  const groupToWire = (stored: StoredGroup): wire.ClusterGroup => ({
    name: stored.record.name,
    labels: { ...stored.record.labels },
    ...compact({ selector: stored.record.selector }),
    createdAtMs: stored.record.createdAtMs,
    updatedAtMs: stored.record.updatedAtMs,
    revision: stored.revision,
  });

  const clusterStatus = (name: string): ClusterStatus => {
    const status = deps.registry.status(name);
    if (status === undefined) {
      throw new FlotillaError(
        "not_found",
        `Cluster "${name}" is not registered`,
      );
    }
    return status;
  };

  const groupInput = (raw: wire.ClusterGroup__Output | null | undefined) => {
    if (raw === null || raw === undefined) {
      throw FlotillaError.invalid("cluster group", [
        { path: "group", message: "is required" },
      ]);
    }
    const name = requireName(raw.name, "group.name", "cluster group");
    return {
      name,
      labels: raw.labels,
      ...(raw.selector === undefined || raw.selector === null
        ? {}
        : { selector: raw.selector }),
    };
  };

  return {
    ListClusters: unary(async (request) => {
      let selector: LabelSelector | undefined;
      if (request.labelSelector !== "") {
        const parsed = parseSelectorString(
          request.labelSelector,
          "labelSelector",
        );
        if (!parsed.ok)
          throw FlotillaError.invalid("label selector", parsed.problems);
        selector = parsed.value;
      }
      const page = paginate(
        deps.registry.list(selector),
        (c) => c.record.name,
        request.pageSize,
        request.pageToken,
      );
      return {
        clusters: await Promise.all(page.items.map(clusterToWire)),
        nextPageToken: page.nextPageToken,
      };
    }),

    GetCluster: unary(async (request) => {
      const name = requireName(request.name, "name", "cluster");
      const cluster = await clusterToWire(clusterStatus(name));
      const bundles = (await deps.bundlesOn?.(name)) ?? [];
      return {
        cluster,
        bundles: bundles.map((b) => ({
          bundle: b.bundle,
          revision: b.revision,
          status: bundleClusterToWire(b.view),
        })),
      };
    }),

    LabelCluster: unary(
      audited(
        deps,
        {
          method: "LabelCluster",
          targetKind: "cluster",
          targetName: (r) => r.name,
          reason: (r) => r.reason,
        },
        async (request) => {
          const name = requireName(request.name, "name", "cluster labels");
          const problems: Problem[] = [];
          const set = parseLabels(request.setLabels, "setLabels");
          if (!set.ok) problems.push(...set.problems);
          const remove = parseLabels(
            Object.fromEntries(request.removeLabels.map((k) => [k, ""])),
            "removeLabels",
          );
          if (!remove.ok) problems.push(...remove.problems);
          for (const key of request.removeLabels) {
            if (Object.hasOwn(request.setLabels, key)) {
              problems.push({
                path: "removeLabels",
                message: "must not name a label that setLabels sets",
                value: key,
              });
            }
          }
          const updateGroup = request.updateGroup ?? undefined;
          if (updateGroup !== undefined && updateGroup !== "") {
            const problem = nameProblem(updateGroup, "updateGroup");
            if (problem !== undefined) problems.push(problem);
          }
          if (problems.length > 0 || !set.ok)
            throw FlotillaError.invalid("cluster labels", problems);
          clusterStatus(name);
          const status = await deps.registry.label(name, {
            set: set.value,
            remove: request.removeLabels,
            ...compact({ updateGroup }),
            ...(request.paused == null ? {} : { paused: request.paused }),
            ...(request.expectedRevision === 0
              ? {}
              : { expectedRevision: request.expectedRevision }),
          });
          return { cluster: await clusterToWire(status) };
        },
      ),
    ),

    RemoveCluster: unary(
      audited(
        deps,
        {
          method: "RemoveCluster",
          targetKind: "cluster",
          targetName: (r) => r.name,
          reason: (r) => r.reason,
        },
        async (request) => {
          const name = requireName(request.name, "name", "cluster");
          clusterStatus(name);
          // Its credentials go first: a removal that fails after this leaves the cluster listed
          // (the call can be repeated), never listed as gone with credentials that still work.
          await deps.forgetIdentity?.(name);
          await deps.registry.remove(name);
          await deps.intents.remove(name);
          return {};
        },
      ),
    ),

    CreateClusterGroup: unary(
      audited(
        deps,
        {
          method: "CreateClusterGroup",
          targetKind: "cluster-group",
          targetName: (r) => r.group?.name ?? "",
          reason: (r) => r.reason,
        },
        async (request) => ({
          group: groupToWire(
            await deps.groups.create(groupInput(request.group)),
          ),
        }),
      ),
    ),

    UpdateClusterGroup: unary(
      audited(
        deps,
        {
          method: "UpdateClusterGroup",
          targetKind: "cluster-group",
          targetName: (r) => r.group?.name ?? "",
          reason: (r) => r.reason,
        },
        async (request) => {
          const input = groupInput(request.group);
          deps.groups.get(input.name);
          const stored = await deps.groups.update(
            input,
            request.expectedRevision === 0
              ? undefined
              : request.expectedRevision,
          );
          return { group: groupToWire(stored) };
        },
      ),
    ),

    GetClusterGroup: unary((request) => {
      const name = requireName(request.name, "name", "cluster group");
      const stored = deps.groups.get(name);
      const clusters = deps.registry
        .clusters()
        .filter((c) => groupsOfCluster(c, [stored.group]).length > 0)
        .map((c) => c.name);
      return { group: groupToWire(stored), clusters };
    }),

    ListClusterGroups: unary((request) => {
      const page = paginate(
        deps.groups.list(),
        (g) => g.record.name,
        request.pageSize,
        request.pageToken,
      );
      return {
        groups: page.items.map(groupToWire),
        nextPageToken: page.nextPageToken,
      };
    }),

    DeleteClusterGroup: unary(
      audited(
        deps,
        {
          method: "DeleteClusterGroup",
          targetKind: "cluster-group",
          targetName: (r) => r.name,
          reason: (r) => r.reason,
        },
        async (request) => {
          const name = requireName(request.name, "name", "cluster group");
          await deps.groups.delete(name);
          return {};
        },
      ),
    ),
  };
}
