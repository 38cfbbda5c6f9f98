/**
 * The member intents a staged run implies (docs/engine.md, "Intents of a run"): which intent
 * changes the actions of a step ask for, and which changes make every member's intent agree with a
 * stored run. Both are decided here so that the hub only publishes them.
 *
 * A member started by an upgrade run holds the run's upgrade with its target; a member that failed
 * has it withdrawn, so that a retry is a new generation. An unchanged intent keeps its generation
 * (see intent.ts), so applying {@link runIntents} to intents that already agree changes nothing:
 * republishing it after a crash is harmless.
 */
import type { IntentChange, IntentChanges } from "../intent.js";
import type { BundleRelease, RunAction } from "./events.js";
import { locateMember } from "./member-index.js";
import type { MemberTarget, Run } from "./run.js";

/** The change that asks a member to upgrade to `target`; undefined unless `run` is an upgrade run. */
export function upgradeIntentChange(
  run: Run,
  target: MemberTarget,
): IntentChange | undefined {
  if (run.payload.kind !== "upgrade") return undefined;
  return {
    type: "SetUpgrade",
    upgrade: { run: run.name, type: run.payload.upgrade.type, target },
  };
}

/** The change that withdraws `run`'s upgrade from a member (a later run's upgrade is kept). */
function clearUpgrade(run: Run): IntentChange {
  return { type: "ClearUpgrade", run: run.name };
}

/**
 * The intent changes `actions` (what one or more steps of `run` returned, in order) ask for, by
 * cluster, in the order of the actions. Empty unless `run` is an upgrade run.
 */
export function intentChangesOf(
  run: Run,
  actions: readonly RunAction[],
): Map<string, IntentChange[]> {
  const out = new Map<string, IntentChange[]>();
  if (run.payload.kind !== "upgrade") return out;
  for (const action of actions) {
    if (action.type === "StartMember") {
      const change = upgradeIntentChange(run, action.target);
      if (change !== undefined) addChange(out, action.member, change);
    } else if (
      action.type === "Transitioned" &&
      action.scope === "member" &&
      action.to === "Failed"
    ) {
      addChange(out, action.name, clearUpgrade(run));
    }
  }
  return out;
}

/**
 * The changes that make every member's intent agree with `run` as stored: Running members hold
 * its upgrade with their target, Failed ones do not hold it. Other members are left alone (a
 * Succeeded member keeps what it was sent). Empty unless `run` is an upgrade run.
 */
export function runIntents(run: Run): Map<string, IntentChange[]> {
  const out = new Map<string, IntentChange[]>();
  if (run.payload.kind !== "upgrade") return out;
  for (const stage of run.stages) {
    for (const group of stage.groups) {
      for (const member of group.members) {
        if (member.state === "Running" && member.target !== undefined) {
          const change = upgradeIntentChange(run, member.target);
          if (change !== undefined) addChange(out, member.name, change);
        } else if (member.state === "Failed") {
          addChange(out, member.name, clearUpgrade(run));
        }
      }
    }
  }
  return out;
}

/** The releases `actions` of a bundle run ask for, in order; empty unless `run` is a bundle run. */
export function bundleReleasesOf(
  run: Run,
  actions: readonly RunAction[],
): BundleRelease[] {
  const { payload } = run;
  if (payload.kind !== "bundle") return [];
  const out: BundleRelease[] = [];
  for (const action of actions) {
    if (action.type !== "StartMember") continue;
    const member = locateMember(run, action.member)?.member;
    out.push({
      member: action.member,
      bundle: payload.bundle,
      revision: action.target.revision ?? payload.revision,
      again: (member?.failureCount ?? 0) > 0,
    });
  }
  return out;
}

/**
 * The releases that make every member's intent agree with a stored bundle run: every member the
 * run started (Running, Succeeded or Failed) holds its revision; a failed member keeps it (rollback
 * is not the run's). Never `again`: republishing must not make agents apply again.
 */
export function runBundleReleases(run: Run): BundleRelease[] {
  const { payload } = run;
  if (payload.kind !== "bundle") return [];
  const out: BundleRelease[] = [];
  for (const stage of run.stages) {
    for (const group of stage.groups) {
      for (const member of group.members) {
        if (member.target === undefined) continue;
        if (
          member.state === "Running" ||
          member.state === "Succeeded" ||
          member.state === "Failed"
        ) {
          out.push({
            member: member.name,
            bundle: payload.bundle,
            revision: member.target.revision ?? payload.revision,
            again: false,
          });
        }
      }
    }
  }
  return out;
}

/** Appends `more` to `into`, cluster by cluster, after what `into` already holds. */
export function appendIntentChanges(
  into: Map<string, IntentChange[]>,
  more: IntentChanges,
): void {
  for (const [cluster, changes] of more) {
    for (const change of changes) addChange(into, cluster, change);
  }
}

function addChange(
  out: Map<string, IntentChange[]>,
  cluster: string,
  change: IntentChange,
): void {
  const list = out.get(cluster);
  if (list === undefined) out.set(cluster, [change]);
  else list.push(change);
}
