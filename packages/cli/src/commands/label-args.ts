/**
 * Label changes on the command line, kubectl's way: `key=value` sets a label, `key-` removes one.
 * Keys and values are checked with core's rules, so a bad label is refused before the hub sees it.
 */
import {
  fail,
  labelKeyProblem,
  labelValueProblem,
  ok,
  problem,
  type Problem,
  type Result,
} from "@flotilla/core";

/** Labels to set and keys to remove. */
export interface LabelChanges {
  readonly set: Readonly<Record<string, string>>;
  readonly remove: readonly string[];
}

/** Parses `words`; removals (`key-`) only where `allowRemove`. */
export function parseLabelChanges(
  words: readonly string[],
  options: { readonly allowRemove: boolean },
): Result<LabelChanges> {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  const problems: Problem[] = [];
  for (const word of words) {
    const eq = word.indexOf("=");
    if (eq === -1 && options.allowRemove && word.endsWith("-")) {
      const key = word.slice(0, -1);
      const keyProblem = labelKeyProblem(key);
      if (keyProblem !== undefined) problems.push(problem(keyProblem));
      else remove.push(key);
      continue;
    }
    if (eq === -1) {
      problems.push(
        problem(
          `"${word}": expected key=value${options.allowRemove ? " or key- (to remove)" : ""}`,
        ),
      );
      continue;
    }
    const key = word.slice(0, eq);
    const value = word.slice(eq + 1);
    const keyProblem = labelKeyProblem(key);
    const valueProblem = labelValueProblem(value);
    if (keyProblem !== undefined) problems.push(problem(keyProblem));
    if (valueProblem !== undefined) problems.push(problem(valueProblem));
    if (key in set && set[key] !== value)
      problems.push(
        problem(`"${word}": label ${key} is given twice with different values`),
      );
    set[key] = value;
  }
  for (const key of remove)
    if (key in set)
      problems.push(problem(`label ${key} is both set and removed`));
  return problems.length > 0 ? fail(problems) : ok({ set, remove });
}
