/**
 * Kubernetes label selectors (docs/semantics.md#label-selectors) in both forms: the struct form
 * (`matchLabels` / `matchExpressions`) used by Fleet, and the string form (`env=prod,tier in (a,b)`)
 * used by AKS `memberSelector.byLabel`. Both compile to one list of requirements with Kubernetes
 * semantics: `!=` and `notin` match objects that lack the key; an empty selector matches everything.
 * "Absent selector matches nothing" is the caller's business: there is no selector value for it.
 */
import { boundsProblems } from "./input-bounds.js";
import { fail, joinPath, ok, type Problem, type Result } from "./result.js";

/**
 * Most labels one map may hold: a cluster's as its agent reports them, an operator's changes, a
 * cluster group's. Kubernetes has no such limit, but label maps travel in every cluster's facts and
 * every selector match walks them.
 */
export const MAX_LABELS = 64;

/** A requirement's operator, as Kubernetes spells it in `matchExpressions`. */
export type SelectorOperator = "In" | "NotIn" | "Exists" | "DoesNotExist";

/** One requirement: a key, an operator and (for In / NotIn) a non-empty value set. */
export interface Requirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  readonly values: readonly string[];
}

/** A compiled selector: all requirements must hold. */
export interface LabelSelector {
  readonly requirements: readonly Requirement[];
  /** The selector as the user wrote it, for messages. */
  readonly source: string;
}

/** Labels of a cluster or group. */
export type Labels = Readonly<Record<string, string>>;

/** The struct form as it appears in YAML/JSON. */
export interface LabelSelectorStruct {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: SelectorOperator;
    readonly values?: readonly string[];
  }[];
}

/** True when every requirement of `selector` holds for `labels`. */
export function matchesSelector(
  selector: LabelSelector,
  labels: Labels,
): boolean {
  for (const req of selector.requirements) {
    const has = Object.prototype.hasOwnProperty.call(labels, req.key);
    const value = has ? labels[req.key] : undefined;
    switch (req.operator) {
      case "In":
        if (value === undefined || !req.values.includes(value)) return false;
        break;
      case "NotIn":
        if (value !== undefined && req.values.includes(value)) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default: {
        const never: never = req.operator;
        return never;
      }
    }
  }
  return true;
}

/** The selector that matches everything. */
export const EVERYTHING: LabelSelector = { requirements: [], source: "" };

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Checks a label key (`[prefix/]name`); returns a message or undefined when valid. */
export function labelKeyProblem(key: string): string | undefined {
  if (key === "") return "label key must not be empty";
  const slash = key.indexOf("/");
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (slash !== -1) {
    const prefix = key.slice(0, slash);
    if (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) {
      return `label key prefix ${JSON.stringify(prefix)} must be a DNS subdomain`;
    }
  }
  if (name.length > 63 || !NAME.test(name)) {
    return `label key ${JSON.stringify(key)} must be at most 63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric`;
  }
  return undefined;
}

/** Checks a label value (may be empty); returns a message or undefined when valid. */
export function labelValueProblem(value: string): string | undefined {
  if (value === "") return undefined;
  if (value.length > 63 || !NAME.test(value)) {
    return `label value ${JSON.stringify(value)} must be at most 63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric`;
  }
  return undefined;
}

/** Validates a labels map from untrusted input: at most {@link MAX_LABELS}, keys and values. */
export function parseLabels(raw: unknown, path: string): Result<Labels> {
  if (raw === undefined || raw === null) return ok({});
  if (typeof raw !== "object" || Array.isArray(raw)) {
    return fail([
      {
        path,
        message: "must be a map of label keys to string values",
        value: raw,
      },
    ]);
  }
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > MAX_LABELS) {
    return fail([
      {
        path,
        message: `must have at most ${String(MAX_LABELS)} labels`,
        value: `${String(entries.length)} labels`,
      },
    ]);
  }
  const refused = boundsProblems(raw, path);
  if (refused.length > 0) return fail(refused);
  const problems: Problem[] = [];
  const labels: Record<string, string> = {};
  for (const [key, value] of entries) {
    const at = joinPath(path, key);
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined)
      problems.push({ path: at, message: keyProblem });
    if (typeof value !== "string") {
      problems.push({
        path: at,
        message: "label value must be a string",
        value,
      });
      continue;
    }
    const valueProblem = labelValueProblem(value);
    if (valueProblem !== undefined)
      problems.push({ path: at, message: valueProblem, value });
    labels[key] = value;
  }
  return problems.length > 0 ? fail(problems) : ok(labels);
}

/**
 * Parses the string form (`k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`,
 * comma-separated). Errors carry the 1-based character position.
 */
export function parseSelectorString(
  text: string,
  path: string,
): Result<LabelSelector> {
  const parser = new SelectorStringParser(text, path);
  const requirements = parser.parse();
  if (parser.problem !== undefined) return fail([parser.problem]);
  return ok({ requirements, source: text });
}

class SelectorStringParser {
  problem: Problem | undefined;
  private pos = 0;

  constructor(
    private readonly text: string,
    private readonly path: string,
  ) {}

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    this.skipSpaces();
    if (this.pos >= this.text.length) return requirements;
    for (;;) {
      const req = this.requirement();
      if (req === undefined) return requirements;
      requirements.push(req);
      this.skipSpaces();
      if (this.pos >= this.text.length) return requirements;
      if (this.text[this.pos] !== ",") {
        this.error(`expected "," between requirements`);
        return requirements;
      }
      this.pos += 1;
      this.skipSpaces();
    }
  }

  private requirement(): Requirement | undefined {
    if (this.text[this.pos] === "!") {
      this.pos += 1;
      this.skipSpaces();
      const key = this.key();
      if (key === undefined) return undefined;
      return { key, operator: "DoesNotExist", values: [] };
    }
    const key = this.key();
    if (key === undefined) return undefined;
    this.skipSpaces();
    const rest = this.text.slice(this.pos);
    if (rest === "" || rest.startsWith(","))
      return { key, operator: "Exists", values: [] };
    if (rest.startsWith("==")) return this.single(key, "In", 2);
    if (rest.startsWith("!=")) return this.single(key, "NotIn", 2);
    if (rest.startsWith("=")) return this.single(key, "In", 1);
    const word = /^[a-z]+/.exec(rest)?.[0];
    if (word === "in" || word === "notin") {
      this.pos += word.length;
      return this.set(key, word === "in" ? "In" : "NotIn");
    }
    this.error(
      `expected one of "=", "==", "!=", "in", "notin", "," after key ${JSON.stringify(key)}`,
    );
    return undefined;
  }

  private single(
    key: string,
    operator: SelectorOperator,
    width: number,
  ): Requirement | undefined {
    this.pos += width;
    this.skipSpaces();
    const value = this.value();
    if (value === undefined) return undefined;
    return { key, operator, values: [value] };
  }

  private set(
    key: string,
    operator: SelectorOperator,
  ): Requirement | undefined {
    this.skipSpaces();
    if (this.text[this.pos] !== "(") {
      this.error(`expected "(" after "${operator === "In" ? "in" : "notin"}"`);
      return undefined;
    }
    this.pos += 1;
    const values: string[] = [];
    for (;;) {
      this.skipSpaces();
      const value = this.value();
      if (value === undefined) return undefined;
      if (
        value === "" &&
        this.text[this.pos] !== "," &&
        this.text[this.pos] !== ")"
      ) {
        this.error("expected a value");
        return undefined;
      }
      values.push(value);
      this.skipSpaces();
      const c = this.text[this.pos];
      if (c === ",") {
        this.pos += 1;
        continue;
      }
      if (c === ")") {
        if (values.length === 1 && values[0] === "") {
          this.error("a value list must not be empty");
          return undefined;
        }
        this.pos += 1;
        break;
      }
      this.error(
        c === undefined ? `missing ")"` : `expected "," or ")" in value list`,
      );
      return undefined;
    }
    return { key, operator, values };
  }

  private key(): string | undefined {
    const start = this.pos;
    const match = /^[A-Za-z0-9_.\-/]+/.exec(this.text.slice(this.pos));
    if (match === null) {
      this.error("expected a label key", start);
      return undefined;
    }
    const key = match[0];
    const problem = labelKeyProblem(key);
    if (problem !== undefined) {
      this.error(problem, start);
      return undefined;
    }
    this.pos += key.length;
    return key;
  }

  private value(): string | undefined {
    const start = this.pos;
    const value = /^[A-Za-z0-9_.-]*/.exec(this.text.slice(this.pos))?.[0] ?? "";
    const problem = labelValueProblem(value);
    if (problem !== undefined) {
      this.error(problem, start);
      return undefined;
    }
    this.pos += value.length;
    return value;
  }

  private skipSpaces(): void {
    while (this.text[this.pos] === " " || this.text[this.pos] === "\t")
      this.pos += 1;
  }

  private error(message: string, at = this.pos): void {
    this.problem ??= {
      path: this.path,
      message: `invalid selector at position ${String(at + 1)}: ${message}`,
      value: this.text,
    };
  }
}

const OPERATORS: readonly SelectorOperator[] = [
  "In",
  "NotIn",
  "Exists",
  "DoesNotExist",
];

/** Parses the struct form from untrusted input. */
export function parseSelectorStruct(
  raw: unknown,
  path: string,
): Result<LabelSelector> {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return fail([
      {
        path,
        message: "must be a label selector {matchLabels, matchExpressions}",
        value: raw,
      },
    ]);
  }
  const problems: Problem[] = [];
  const requirements: Requirement[] = [];
  const obj = raw as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (key !== "matchLabels" && key !== "matchExpressions") {
      problems.push({
        path: joinPath(path, key),
        message:
          'unknown field; a selector has "matchLabels" and "matchExpressions"',
      });
    }
  }
  const labels = parseLabels(obj["matchLabels"], joinPath(path, "matchLabels"));
  if (!labels.ok) problems.push(...labels.problems);
  else {
    for (const key of Object.keys(labels.value).sort()) {
      requirements.push({
        key,
        operator: "In",
        values: [labels.value[key] ?? ""],
      });
    }
  }
  const expressions = obj["matchExpressions"];
  if (expressions !== undefined && expressions !== null) {
    const exprPath = joinPath(path, "matchExpressions");
    if (!Array.isArray(expressions)) {
      problems.push({
        path: exprPath,
        message: "must be a list",
        value: expressions,
      });
    } else {
      expressions.forEach((item: unknown, index) => {
        const at = joinPath(exprPath, index);
        const parsed = parseExpression(item, at);
        if (parsed.ok) requirements.push(parsed.value);
        else problems.push(...parsed.problems);
      });
    }
  }
  if (problems.length > 0) return fail(problems);
  return ok({
    requirements,
    source: selectorToString({ requirements, source: "" }),
  });
}

function parseExpression(item: unknown, at: string): Result<Requirement> {
  if (item === null || typeof item !== "object" || Array.isArray(item)) {
    return fail([
      { path: at, message: "must be {key, operator, values}", value: item },
    ]);
  }
  const expr = item as Record<string, unknown>;
  const problems: Problem[] = [];
  const key = expr["key"];
  if (typeof key !== "string") {
    problems.push({
      path: joinPath(at, "key"),
      message: "must be a string",
      value: key,
    });
  } else {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined)
      problems.push({ path: joinPath(at, "key"), message: keyProblem });
  }
  const operator = expr["operator"];
  if (
    typeof operator !== "string" ||
    !OPERATORS.includes(operator as SelectorOperator)
  ) {
    problems.push({
      path: joinPath(at, "operator"),
      message: `must be one of ${OPERATORS.join(", ")}`,
      value: operator,
    });
  }
  const rawValues = expr["values"] ?? [];
  const values: string[] = [];
  if (
    !Array.isArray(rawValues) ||
    rawValues.some((v) => typeof v !== "string")
  ) {
    problems.push({
      path: joinPath(at, "values"),
      message: "must be a list of strings",
      value: rawValues,
    });
  } else {
    values.push(...(rawValues as string[]));
  }
  if (problems.length > 0) return fail(problems);
  const op = operator as SelectorOperator;
  if ((op === "In" || op === "NotIn") && values.length === 0) {
    return fail([
      {
        path: joinPath(at, "values"),
        message: `must not be empty for operator ${op}`,
      },
    ]);
  }
  if ((op === "Exists" || op === "DoesNotExist") && values.length > 0) {
    return fail([
      {
        path: joinPath(at, "values"),
        message: `must be empty for operator ${op}`,
        value: values,
      },
    ]);
  }
  return ok({ key: key as string, operator: op, values });
}

/** Renders a selector in the string form (stable, for plan output and messages). */
export function selectorToString(selector: LabelSelector): string {
  return selector.requirements
    .map((r) => {
      switch (r.operator) {
        case "In":
          return r.values.length === 1
            ? `${r.key}=${r.values[0] ?? ""}`
            : `${r.key} in (${r.values.join(",")})`;
        case "NotIn":
          return r.values.length === 1
            ? `${r.key}!=${r.values[0] ?? ""}`
            : `${r.key} notin (${r.values.join(",")})`;
        case "Exists":
          return r.key;
        case "DoesNotExist":
          return `!${r.key}`;
        default: {
          const never: never = r.operator;
          return never;
        }
      }
    })
    .join(",");
}
