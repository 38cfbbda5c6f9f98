/**
 * Simulates a partitioned (Fleet) rollout in virtual time: the real pass decides the releases; the
 * scenario decides when each released cluster applies and becomes Ready, and when clusters join
 * or leave the fleet. A pass runs whenever something changed, and again after the hub's pass
 * interval while a pass was cut short by maxNew or a workloads window opens later.
 */
import type { Cluster, ClusterGroup } from "../cluster.js";
import {
  bundleClusterState,
  rolloutPass,
  type BundleClusterState,
  type DeploymentObservation,
} from "../fleet/rollout-pass.js";
import type { FleetRolloutStrategy } from "../fleet/strategy.js";
import type { SimulationOutput, TimelineEntry } from "../preview-types.js";
import { behaviourOf, failsAttempt, type Scenario } from "../scenario.js";
import { joiningLater } from "../scenario-actions.js";
import { isoTime } from "../staged/context.js";
import { EventQueue } from "./event-queue.js";

type FleetEvent =
  | { readonly kind: "pass" }
  | {
      readonly kind: "offline" | "online" | "join" | "leave";
      readonly cluster: string;
    }
  | {
      readonly kind: "outcome";
      readonly cluster: string;
      readonly revision: string;
      /** Which release it answers: a cluster that left and joined again is released anew. */
      readonly releasedAtMs: number;
    };

interface Observation {
  releasedRevision?: string;
  appliedRevision?: string;
  ready: boolean;
  errored: boolean;
  modified: boolean;
  unreachable: boolean;
  releasedAtMs?: number;
  readyAtMs?: number;
}

/** Inputs of a partitioned-rollout simulation. */
export interface FleetSimulationInput {
  /** Every cluster of the clusters file; those that join later are targets from then on. */
  readonly clusters: readonly Cluster[];
  readonly clusterGroups: readonly ClusterGroup[];
  readonly strategy: FleetRolloutStrategy;
  readonly scenario: Scenario;
}

/** Runs the simulation to the end (every partitioned target Ready), to a standstill, or to `until`. */
export function simulateFleetRollout(
  input: FleetSimulationInput,
): SimulationOutput {
  const { scenario, clusters } = input;
  const revision = scenario.kind === "firstDeployment" ? "1" : "2";
  // Paused clusters get nothing new: the rollout is done once every other target is Ready.
  const paused = new Set(clusters.filter((c) => c.paused).map((c) => c.name));
  const observations = new Map<string, Observation>();
  const later = joiningLater(scenario.actions);
  const present = new Set(
    clusters.filter((c) => !later.has(c.name)).map((c) => c.name),
  );
  if (scenario.kind !== "firstDeployment") {
    // Clusters in the fleet at the start hold the previous revision; a joiner holds nothing.
    for (const name of present)
      observations.set(name, {
        releasedRevision: "1",
        appliedRevision: "1",
        ready: true,
        errored: false,
        modified: false,
        unreachable: false,
      });
  }
  const timeline: TimelineEntry[] = [];
  const queue = new EventQueue<FleetEvent>();
  const waiting = new Map<string, FleetEvent>();
  const offline = new Set<string>();
  const held = new Set<string>();
  const partitionNotReady = new Map<string, boolean>();
  for (const c of clusters) {
    for (const w of behaviourOf(scenario, c.name).offline) {
      queue.push(w.fromMs, { kind: "offline", cluster: c.name });
      queue.push(w.toMs, { kind: "online", cluster: c.name });
    }
  }
  for (const action of scenario.actions)
    if (action.action === "join" || action.action === "leave")
      queue.push(action.atMs, { kind: action.action, cluster: action.cluster });
  let now = scenario.startMs;
  let endMs = now;
  let passScheduledAt: number | undefined;
  const schedulePass = (at: number): void => {
    if (
      passScheduledAt !== undefined &&
      passScheduledAt <= at &&
      passScheduledAt >= now
    )
      return;
    passScheduledAt = at;
    queue.push(at, { kind: "pass" });
  };
  const observe = (name: string): Observation => {
    let o = observations.get(name);
    if (o === undefined) {
      o = { ready: false, errored: false, modified: false, unreachable: false };
      observations.set(name, o);
    }
    return o;
  };
  const deployments = (): ReadonlyMap<string, DeploymentObservation> =>
    observations;
  let lastPartitions: ReturnType<typeof rolloutPass>["partitions"] = [];
  const partitionOf = new Map<string, string>();
  const where = (cluster: string): { wave?: string; group?: string } => {
    const p = partitionOf.get(cluster);
    return p === undefined ? {} : { wave: p, group: p };
  };
  let unassigned: readonly string[] = [];
  let finished = false;

  const runPass = (): void => {
    const result = rolloutPass({
      strategy: input.strategy,
      targets: clusters.filter((c) => present.has(c.name)),
      clusterGroups: input.clusterGroups,
      revision,
      deployments: deployments(),
      nowMs: now,
    });
    unassigned = result.unassigned;
    for (const r of result.release) {
      const o = observe(r.cluster);
      o.releasedRevision = revision;
      o.errored = false;
      o.releasedAtMs = now;
      delete o.readyAtMs;
      held.delete(r.cluster);
      timeline.push({
        at: isoTime(now),
        type: "released",
        cluster: r.cluster,
        wave: r.partition,
        group: r.partition,
        message: `Released revision ${revision} (${r.kind === "first" ? "first deployment" : "update"})`,
      });
      const b = behaviourOf(scenario, r.cluster);
      // A revision is released to a cluster once: this is its first attempt.
      const after = failsAttempt(b, 1)
        ? b.failAfterSeconds
        : b.readyAfterSeconds;
      queue.push(now + after * 1000, {
        kind: "outcome",
        cluster: r.cluster,
        revision,
        releasedAtMs: now,
      });
    }
    let again: number | undefined;
    for (const h of result.held) {
      if (h.reason === "MaxNew")
        again = now + scenario.passIntervalSeconds * 1000;
      if (h.reason === "WindowClosed" || h.reason === "Paused") {
        if (!held.has(h.cluster)) {
          held.add(h.cluster);
          timeline.push({
            at: isoTime(now),
            type: "held",
            cluster: h.cluster,
            wave: h.partition,
            group: h.partition,
            message: h.message,
          });
        }
        if (
          h.nextOpeningMs !== undefined &&
          (again === undefined || h.nextOpeningMs < again)
        )
          again = h.nextOpeningMs;
      }
    }
    for (const p of result.partitions) {
      if (!p.visited) continue;
      const before = partitionNotReady.get(p.name);
      if (before !== p.notReady) {
        partitionNotReady.set(p.name, p.notReady);
        timeline.push({
          at: isoTime(now),
          type: "partition",
          wave: p.name,
          ...(before === undefined
            ? {}
            : { from: before ? "NotReady" : "Ready" }),
          to: p.notReady ? "NotReady" : "Ready",
          message: `${String(p.notReadyCount)} of ${String(p.clusters.length)} not ready, maxUnavailable ${String(p.maxUnavailable)}`,
        });
      }
    }
    lastPartitions = result.partitions;
    for (const p of result.partitions)
      for (const c of p.clusters) partitionOf.set(c, p.name);
    const partitioned = result.partitions
      .flatMap((p) => p.clusters)
      .filter((n) => !paused.has(n));
    finished = partitioned.every((n) => {
      const s = bundleClusterState(observe(n), revision);
      return s === "Ready" || s === "Modified";
    });
    if (!finished && again !== undefined) schedulePass(again);
  };

  schedulePass(now);
  while (queue.size > 0 && !finished) {
    const at = queue.peekTime();
    if (at === undefined || at > scenario.untilMs) break;
    now = at;
    let passDue = false;
    while (queue.peekTime() === now) {
      const ev = queue.pop()?.item;
      if (ev === undefined) break;
      if (ev.kind === "pass") {
        passDue = true;
        passScheduledAt = undefined;
        continue;
      }
      passDue = true;
      if (ev.kind === "join" || ev.kind === "leave") {
        timeline.push({
          at: isoTime(now),
          type: ev.kind === "join" ? "joined" : "left",
          cluster: ev.cluster,
          ...where(ev.cluster),
          message:
            ev.kind === "join"
              ? "Cluster joined the fleet; it gets the revision in its turn"
              : "Cluster left the fleet",
        });
        if (ev.kind === "join") present.add(ev.cluster);
        else {
          present.delete(ev.cluster);
          // Leaving removes what was deployed there: a cluster that joins again starts afresh.
          observations.delete(ev.cluster);
          held.delete(ev.cluster);
        }
        continue;
      }
      if (ev.kind === "offline" || ev.kind === "online") {
        const o = observe(ev.cluster);
        o.unreachable = ev.kind === "offline";
        if (o.unreachable) offline.add(ev.cluster);
        else offline.delete(ev.cluster);
        timeline.push({
          at: isoTime(now),
          type: ev.kind,
          cluster: ev.cluster,
          ...where(ev.cluster),
          message:
            ev.kind === "offline" ? "Agent unreachable" : "Agent reconnected",
        });
        const due = waiting.get(ev.cluster);
        if (ev.kind === "online" && due !== undefined) {
          waiting.delete(ev.cluster);
          queue.push(now, due);
        }
        continue;
      }
      if (ev.kind !== "outcome") continue;
      if (offline.has(ev.cluster)) {
        waiting.set(ev.cluster, ev);
        continue;
      }
      const o = observations.get(ev.cluster);
      if (
        o === undefined ||
        o.releasedRevision !== ev.revision ||
        o.releasedAtMs !== ev.releasedAtMs
      )
        continue;
      const b = behaviourOf(scenario, ev.cluster);
      const fails = failsAttempt(b, 1);
      const before = bundleClusterState(o, revision);
      if (fails) o.errored = true;
      else {
        o.appliedRevision = ev.revision;
        o.ready = !b.neverReady;
        if (o.ready) o.readyAtMs = now;
      }
      const after = bundleClusterState(o, revision);
      const message = fails
        ? `Apply failed after ${String(b.failAfterSeconds)}s (simulated)`
        : o.ready
          ? `Ready at revision ${revision}`
          : `Applied revision ${revision}; resources not ready`;
      timeline.push({
        at: isoTime(now),
        type:
          after === "ErrApplied"
            ? "errApplied"
            : after === "NotReady"
              ? "notReady"
              : "ready",
        cluster: ev.cluster,
        ...where(ev.cluster),
        from: before,
        to: after,
        message,
      });
    }
    if (passDue) {
      runPass();
      endMs = now;
    }
  }
  return outputOf(
    lastPartitions,
    paused,
    unassigned,
    observations,
    revision,
    scenario,
    finished ? endMs : Math.min(now, scenario.untilMs),
    timeline,
    finished,
  );
}

function outputOf(
  partitions: ReturnType<typeof rolloutPass>["partitions"],
  paused: ReadonlySet<string>,
  unassigned: readonly string[],
  observations: ReadonlyMap<string, Observation>,
  revision: string,
  scenario: Scenario,
  endMs: number,
  timeline: TimelineEntry[],
  finished: boolean,
): SimulationOutput {
  let failureCount = 0;
  const stateOf = (name: string): BundleClusterState => {
    const o = observations.get(name);
    return o === undefined ? "Pending" : bundleClusterState(o, revision);
  };
  const waves = partitions.map((p) => {
    const members = p.clusters.map((name) => {
      const o = observations.get(name);
      const state = stateOf(name);
      if (state === "ErrApplied") failureCount++;
      const held = paused.has(name) && o?.releasedRevision !== revision;
      return {
        name,
        state,
        ...(held ? { reason: "Paused" } : {}),
        ...(o?.releasedAtMs === undefined
          ? {}
          : { releasedAt: isoTime(o.releasedAtMs) }),
        ...(o?.readyAtMs === undefined || o.releasedRevision !== revision
          ? {}
          : { finishedAt: isoTime(o.readyAtMs) }),
      };
    });
    const groupFailures = members.filter(
      (m) => m.state === "ErrApplied",
    ).length;
    const state = members.every(
      (m) =>
        m.state === "Ready" || m.state === "Modified" || paused.has(m.name),
    )
      ? "Ready"
      : "NotReady";
    return {
      name: p.name,
      state,
      failureCount: groupFailures,
      groups: [{ name: p.name, state, failureCount: groupFailures, members }],
    };
  });
  return {
    apiVersion: "flotilla.dev/v1",
    dialect: "fleet",
    start: isoTime(scenario.startMs),
    end: isoTime(endMs),
    durationSeconds: Math.round((endMs - scenario.startMs) / 1000),
    finalState: finished ? "Ready" : "NotReady",
    failureCount,
    truncated: !finished,
    timeline,
    waves,
    unassigned,
    warnings: [],
  };
}
