/**
 * The rules of an update strategy that its schema alone cannot express: unique stage and group
 * names (including a stageless implicit group), at most 50 groups per stage, the stage concurrency
 * ceiling, ScheduledStart gates in before-gates only, and a stage needing groups or a selector.
 *
 * They read the raw document, so they are reported together with the schema's problems: a person
 * fixes a file in one round, not two.
 */
import { parseIntOrPercent } from "./int-or-percent.js";
import type { Problem } from "./result.js";

/** Most groups a stage may have (AKS system limit). */
export const MAX_GROUPS_PER_STAGE = 50;

/**
 * Most stages a strategy may have. AKS documents no limit; stages run one after another, each
 * waiting for the last, so a real rollout has a handful. 100 is generous and keeps a strategy
 * (and every run frozen from it) within what the hub checks, stores and shows at once.
 */
export const MAX_STAGES = 100;

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function scheduledInAfterGates(
  scope: Record<string, unknown>,
  path: string,
): Problem[] {
  return list(scope["afterGates"]).flatMap((gate, i) =>
    record(gate)?.["type"] === "ScheduledStart"
      ? [
          {
            path: `${path}.afterGates[${String(i)}].type`,
            message: "ScheduledStart gates are allowed in beforeGates only",
            value: "ScheduledStart",
          },
        ]
      : [],
  );
}

/** Checks the cross-field rules on the raw strategy document (`{stages: [...]}`). */
export function strategyRuleProblems(
  doc: unknown,
  prefix: string,
  maxStageConcurrency: number,
): Problem[] {
  const at = (path: string): string =>
    prefix === "" ? path : `${prefix}.${path}`;
  const problems: Problem[] = [];
  const stageNames = new Map<string, string>();
  const groupNames = new Map<string, string>();
  // A stage without groups forms an implicit group named after it; group names must stay unique.
  const implicit: { name: string; path: string }[] = [];
  for (const [si, rawStage] of list(record(doc)?.["stages"]).entries()) {
    const stage = record(rawStage);
    if (stage === undefined) continue;
    const sp = at(`stages[${String(si)}]`);
    const name = stage["name"];
    if (typeof name === "string") {
      const seen = stageNames.get(name);
      if (seen !== undefined) {
        problems.push({
          path: `${sp}.name`,
          message: `duplicate stage name; first used at ${seen}`,
          value: name,
        });
      } else stageNames.set(name, `${sp}.name`);
    }
    const concurrency = parseIntOrPercent(
      stage["maxConcurrency"],
      "",
      "concurrency",
    );
    if (
      concurrency.ok &&
      concurrency.value.kind === "int" &&
      concurrency.value.value > maxStageConcurrency
    ) {
      problems.push({
        path: `${sp}.maxConcurrency`,
        message: `must be at most ${String(maxStageConcurrency)} (the stage limit)`,
        value: stage["maxConcurrency"],
      });
    }
    problems.push(...scheduledInAfterGates(stage, sp));
    const groups = list(stage["groups"]);
    if (groups.length > MAX_GROUPS_PER_STAGE) {
      problems.push({
        path: `${sp}.groups`,
        message: `a stage may have at most ${String(MAX_GROUPS_PER_STAGE)} groups`,
        value: `${String(groups.length)} groups`,
      });
    }
    if (groups.length === 0) {
      if (stage["memberSelector"] === undefined) {
        problems.push({
          path: sp,
          message:
            "a stage needs groups or a memberSelector (which forms one implicit group)",
        });
      } else if (typeof name === "string")
        implicit.push({ name, path: `${sp}.name` });
    }
    for (const [gi, rawGroup] of groups.entries()) {
      const group = record(rawGroup);
      if (group === undefined) continue;
      const gp = `${sp}.groups[${String(gi)}]`;
      const groupName = group["name"];
      if (typeof groupName === "string") {
        const seen = groupNames.get(groupName);
        if (seen !== undefined) {
          problems.push({
            path: `${gp}.name`,
            message: `duplicate group name (group names are unique across the strategy); first used at ${seen}`,
            value: groupName,
          });
        } else groupNames.set(groupName, `${gp}.name`);
      }
      problems.push(...scheduledInAfterGates(group, gp));
    }
  }
  for (const stage of implicit) {
    const clash = groupNames.get(stage.name);
    if (clash !== undefined) {
      problems.push({
        path: clash,
        message: `group name clashes with the implicit group of stage "${stage.name}" (${stage.path}), which has no groups`,
        value: stage.name,
      });
    }
  }
  return problems;
}
