/**
 * The member intents a run asks for: which changes a stepped batch implies, and what a stored run
 * implies for members whose intent may lag after a crash. An unchanged intent keeps its
 * generation, so publishing the same change again is harmless.
 */
import type { IntentChange, MemberTarget, Run } from "@flotilla/core";
import type { Transition } from "@flotilla/protocol";
import type { IntentWriter } from "../intents/intent-writer.js";

/** A member the engine started, with the intent change that starts it. */
export interface MemberStart {
  readonly member: string;
  readonly change: IntentChange;
}

/** The intent change that asks a member to upgrade to `target` for an upgrade run. */
export function upgradeChange(
  run: Run,
  target: MemberTarget,
): IntentChange | undefined {
  if (run.payload.kind !== "upgrade") return undefined;
  return {
    type: "SetUpgrade",
    upgrade: { run: run.name, type: run.payload.upgrade.type, target },
  };
}

/** The intent changes one batch of actions asks for, by cluster, in order. */
export function intentChanges(
  run: Run,
  transitions: readonly Transition[],
  starts: readonly MemberStart[],
): Map<string, IntentChange[]> {
  const out = new Map<string, IntentChange[]>();
  const add = (member: string, change: IntentChange): void => {
    const list = out.get(member) ?? [];
    list.push(change);
    out.set(member, list);
  };
  for (const t of transitions) {
    // A failed member's upgrade is withdrawn, so that a retry is a new generation.
    if (t.scope === "member" && t.to === "Failed") {
      add(t.name, { type: "ClearUpgrade", run: run.name });
    }
  }
  for (const s of starts) add(s.member, s.change);
  return out;
}

/** Republishes the intents the stored run implies: Running members hold its upgrade, Failed ones do not. */
export async function republishIntents(
  run: Run,
  intents: IntentWriter,
): Promise<void> {
  if (run.payload.kind !== "upgrade") return;
  for (const stage of run.stages) {
    for (const group of stage.groups) {
      for (const member of group.members) {
        if (member.state === "Running" && member.target !== undefined) {
          const change = upgradeChange(run, member.target);
          if (change !== undefined) await intents.change(member.name, [change]);
        } else if (member.state === "Failed") {
          await intents.change(member.name, [
            { type: "ClearUpgrade", run: run.name },
          ]);
        }
      }
    }
  }
}

/**
 * Publishes each cluster's changes, all clusters at once; a cluster whose intent cannot be written
 * is handed to `failed` and the others go on.
 */
export async function publishChanges(
  changes: ReadonlyMap<string, readonly IntentChange[]>,
  intents: IntentWriter,
  failed: (member: string, error: unknown) => void,
): Promise<void> {
  await Promise.all(
    [...changes].map(async ([member, list]) => {
      try {
        await intents.change(member, list);
      } catch (error) {
        failed(member, error);
      }
    }),
  );
}
