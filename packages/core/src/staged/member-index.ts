/**
 * Finding a member by name. The index is derived data: it is built once per run object on first
 * use and cached outside the run, so runs stay small to persist and a run read back from storage
 * simply builds it again.
 */
import type { Rejection } from "./events.js";
import type { Group, Member, MemberLocation, Run, Stage } from "./run.js";

const cache = new WeakMap<Run, Map<string, MemberLocation>>();

function indexOf(run: Run): Map<string, MemberLocation> {
  let index = cache.get(run);
  if (index === undefined) {
    index = new Map();
    for (const [si, stage] of run.stages.entries()) {
      for (const [gi, group] of stage.groups.entries()) {
        for (const [mi, member] of group.members.entries())
          index.set(member.name, [si, gi, mi]);
      }
    }
    cache.set(run, index);
  }
  return index;
}

/** Where a member is, or undefined when the cluster is not a member of the run. */
export function locateMember(
  run: Run,
  name: string,
): { stage: Stage; group: Group; member: Member } | undefined {
  const loc = indexOf(run).get(name);
  if (loc === undefined) return undefined;
  const stage = run.stages[loc[0]];
  const group = stage?.groups[loc[1]];
  const member = group?.members[loc[2]];
  if (stage === undefined || group === undefined || member === undefined)
    return undefined;
  return { stage, group, member };
}

/** The refusal of an event about a cluster that is not a member of the run. */
export function notAMember(run: Run, name: string): Rejection {
  return {
    code: "not_found",
    message: `Cluster "${name}" is not a member of run "${run.name}"`,
  };
}
