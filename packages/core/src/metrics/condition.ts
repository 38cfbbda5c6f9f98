/**
 * The condition language of metric gates (docs/engine.md#metric-gates): a small expression
 * over the numbers a Prometheus query returned, parsed once when a strategy is submitted and
 * evaluated for every measurement. No `eval`, no variables but `result`, no loops: a condition is a
 * tree of at most {@link MAX_DEPTH} levels over at most {@link MAX_CONDITION_LENGTH} characters.
 *
 *   condition  := or
 *   or         := and ("||" and)*
 *   and        := not ("&&" not)*
 *   not        := "!" not | comparison
 *   comparison := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)?
 *   sum        := product (("+" | "-") product)*
 *   product    := unary (("*" | "/") unary)*
 *   unary      := "-" unary | primary
 *   primary    := NUMBER | "true" | "false" | "result" "[" INDEX "]"
 *               | ("len" | "min" | "max" | "sum" | "avg") "(" "result" ")" | "(" or ")"
 *
 * Types are checked when parsing: comparisons and arithmetic take numbers, `!`, `&&` and `||`
 * take booleans, and the whole condition is a boolean. Evaluation fails (the measurement is
 * inconclusive, never a pass) on an index past the result's end, a NaN or infinite value used, a
 * division by zero, or `min`/`max`/`avg` of an empty result.
 */
import type { Problem, Result } from "../result.js";

/** Longest condition text. */
export const MAX_CONDITION_LENGTH = 512;
/** Deepest nesting of a condition's tree. */
export const MAX_DEPTH = 32;
/** Largest index `result[i]` may name. */
export const MAX_INDEX = 9_999;

const FUNCTIONS = ["len", "min", "max", "sum", "avg"] as const;
type FunctionName = (typeof FUNCTIONS)[number];
const COMPARISONS = ["<", "<=", ">", ">=", "==", "!="] as const;
type Comparison = (typeof COMPARISONS)[number];

/** A parsed condition's tree. */
export type ConditionNode =
  | { readonly type: "number"; readonly value: number }
  | { readonly type: "boolean"; readonly value: boolean }
  | { readonly type: "element"; readonly index: number }
  | { readonly type: "call"; readonly name: FunctionName }
  | { readonly type: "negate"; readonly operand: ConditionNode }
  | { readonly type: "not"; readonly operand: ConditionNode }
  | {
      readonly type: "arithmetic";
      readonly op: "+" | "-" | "*" | "/";
      readonly left: ConditionNode;
      readonly right: ConditionNode;
    }
  | {
      readonly type: "compare";
      readonly op: Comparison;
      readonly left: ConditionNode;
      readonly right: ConditionNode;
    }
  | {
      readonly type: "logical";
      readonly op: "&&" | "||";
      readonly left: ConditionNode;
      readonly right: ConditionNode;
    };

/** A condition ready to evaluate: its text as written and its tree. */
export interface Condition {
  readonly text: string;
  readonly tree: ConditionNode;
}

interface Token {
  readonly kind: "number" | "word" | "op" | "end";
  readonly text: string;
  /** Offset of the token in the text (for messages: "at 12"). */
  readonly at: number;
}

const OPERATORS = [
  "||",
  "&&",
  "<=",
  ">=",
  "==",
  "!=",
  "<",
  ">",
  "!",
  "+",
  "-",
  "*",
  "/",
  "(",
  ")",
  "[",
  "]",
];

class ConditionError extends Error {}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] ?? "";
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const number = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (number !== null) {
      tokens.push({ kind: "number", text: number[0], at: i });
      i += number[0].length;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
    if (word !== null) {
      tokens.push({ kind: "word", text: word[0], at: i });
      i += word[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op === undefined)
      throw new ConditionError(`unexpected character "${c}" at ${String(i)}`);
    tokens.push({ kind: "op", text: op, at: i });
    i += op.length;
  }
  tokens.push({ kind: "end", text: "", at: text.length });
  return tokens;
}

type ValueType = "number" | "boolean";

/** The type `node` evaluates to (checked when it is built). */
function typeOf(node: ConditionNode): ValueType {
  switch (node.type) {
    case "number":
    case "element":
    case "call":
    case "negate":
    case "arithmetic":
      return "number";
    case "boolean":
    case "not":
    case "compare":
    case "logical":
      return "boolean";
  }
}

class Parser {
  private position = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  private peek(): Token {
    return this.tokens[this.position] ?? { kind: "end", text: "", at: 0 };
  }

  private next(): Token {
    const token = this.peek();
    this.position++;
    return token;
  }

  private describe(token: Token): string {
    return token.kind === "end"
      ? "the end of the condition"
      : `"${token.text}" at ${String(token.at)}`;
  }

  private expect(text: string): void {
    const token = this.next();
    if (token.text !== text || token.kind === "number")
      throw new ConditionError(
        `expected "${text}" but found ${this.describe(token)}`,
      );
  }

  private want(node: ConditionNode, type: ValueType, what: string): void {
    if (typeOf(node) !== type)
      throw new ConditionError(
        `${what} takes ${type === "number" ? "numbers" : "true/false values (comparisons)"}`,
      );
  }

  parseAll(): ConditionNode {
    const tree = this.or(0);
    const rest = this.peek();
    if (rest.kind !== "end")
      throw new ConditionError(`unexpected ${this.describe(rest)}`);
    if (typeOf(tree) !== "boolean")
      throw new ConditionError(
        "is a number, not a condition: compare it (e.g. result[0] < 0.01)",
      );
    return tree;
  }

  private deeper(depth: number): number {
    if (depth >= MAX_DEPTH)
      throw new ConditionError(`nests deeper than ${String(MAX_DEPTH)} levels`);
    return depth + 1;
  }

  private or(depth: number): ConditionNode {
    const d = this.deeper(depth);
    let left = this.and(d);
    while (this.peek().text === "||" && this.peek().kind === "op") {
      this.next();
      const right = this.and(d);
      this.want(left, "boolean", '"||"');
      this.want(right, "boolean", '"||"');
      left = { type: "logical", op: "||", left, right };
    }
    return left;
  }

  private and(depth: number): ConditionNode {
    const d = this.deeper(depth);
    let left = this.not(d);
    while (this.peek().text === "&&" && this.peek().kind === "op") {
      this.next();
      const right = this.not(d);
      this.want(left, "boolean", '"&&"');
      this.want(right, "boolean", '"&&"');
      left = { type: "logical", op: "&&", left, right };
    }
    return left;
  }

  private not(depth: number): ConditionNode {
    const d = this.deeper(depth);
    if (this.peek().text === "!" && this.peek().kind === "op") {
      this.next();
      const operand = this.not(d);
      this.want(operand, "boolean", '"!"');
      return { type: "not", operand };
    }
    return this.comparison(d);
  }

  private comparison(depth: number): ConditionNode {
    const d = this.deeper(depth);
    const left = this.sum(d);
    const token = this.peek();
    const op = COMPARISONS.find((c) => c === token.text);
    if (token.kind !== "op" || op === undefined) return left;
    this.next();
    const right = this.sum(d);
    this.want(left, "number", `"${op}"`);
    this.want(right, "number", `"${op}"`);
    return { type: "compare", op, left, right };
  }

  private sum(depth: number): ConditionNode {
    const d = this.deeper(depth);
    let left = this.product(d);
    for (;;) {
      const token = this.peek();
      if (token.kind !== "op" || (token.text !== "+" && token.text !== "-"))
        return left;
      this.next();
      const right = this.product(d);
      this.want(left, "number", `"${token.text}"`);
      this.want(right, "number", `"${token.text}"`);
      left = { type: "arithmetic", op: token.text, left, right };
    }
  }

  private product(depth: number): ConditionNode {
    const d = this.deeper(depth);
    let left = this.unary(d);
    for (;;) {
      const token = this.peek();
      if (token.kind !== "op" || (token.text !== "*" && token.text !== "/"))
        return left;
      this.next();
      const right = this.unary(d);
      this.want(left, "number", `"${token.text}"`);
      this.want(right, "number", `"${token.text}"`);
      left = { type: "arithmetic", op: token.text, left, right };
    }
  }

  private unary(depth: number): ConditionNode {
    const d = this.deeper(depth);
    if (this.peek().text === "-" && this.peek().kind === "op") {
      this.next();
      const operand = this.unary(d);
      this.want(operand, "number", '"-"');
      return { type: "negate", operand };
    }
    return this.primary(d);
  }

  private primary(depth: number): ConditionNode {
    const token = this.next();
    if (token.kind === "number") {
      const value = Number(token.text);
      if (!Number.isFinite(value))
        throw new ConditionError(`number "${token.text}" is too large`);
      return { type: "number", value };
    }
    if (token.kind === "op" && token.text === "(") {
      const inner = this.or(depth);
      this.expect(")");
      return inner;
    }
    if (token.kind === "word") {
      if (token.text === "true" || token.text === "false")
        return { type: "boolean", value: token.text === "true" };
      if (token.text === "result") {
        if (this.peek().text !== "[")
          throw new ConditionError(
            `"result" at ${String(token.at)} is the list of the query's values: name one (result[0]) or use len, min, max, sum or avg(result)`,
          );
        this.next();
        const index = this.next();
        if (
          index.kind !== "number" ||
          !/^\d+$/.test(index.text) ||
          Number(index.text) > MAX_INDEX
        )
          throw new ConditionError(
            `result[...] takes a whole number from 0 to ${String(MAX_INDEX)}, not ${this.describe(index)}`,
          );
        this.expect("]");
        return { type: "element", index: Number(index.text) };
      }
      const fn = FUNCTIONS.find((f) => f === token.text);
      if (fn !== undefined) {
        this.expect("(");
        const argument = this.next();
        if (argument.kind !== "word" || argument.text !== "result")
          throw new ConditionError(
            `${fn}(...) takes result, not ${this.describe(argument)}`,
          );
        this.expect(")");
        return { type: "call", name: fn };
      }
      throw new ConditionError(
        `unknown name "${token.text}" at ${String(token.at)} (known: result, ${FUNCTIONS.join(", ")}, true, false)`,
      );
    }
    throw new ConditionError(
      token.kind === "end"
        ? "ends too early"
        : `unexpected ${this.describe(token)}`,
    );
  }
}

/** Parses `text` (a gate's `successCondition` or `failureCondition`); problems name `field`. */
export function parseCondition(
  text: unknown,
  field: string,
): Result<Condition> {
  const problem = (message: string): Result<Condition> => ({
    ok: false,
    problems: [{ path: field, message, value: text } satisfies Problem],
  });
  if (typeof text !== "string") return problem("must be a string");
  if (text.trim() === "") return problem("must not be empty");
  if (text.length > MAX_CONDITION_LENGTH)
    return problem(`is longer than ${String(MAX_CONDITION_LENGTH)} characters`);
  try {
    const tree = new Parser(tokenize(text)).parseAll();
    return { ok: true, value: { text, tree } };
  } catch (error) {
    if (error instanceof ConditionError) return problem(error.message);
    throw error;
  }
}

/** What evaluating a condition gave: its truth, or why it has none (inconclusive). */
export type ConditionOutcome =
  | { readonly ok: true; readonly value: boolean }
  | { readonly ok: false; readonly reason: string };

class EvaluationError extends Error {}

function finite(value: number, what: string): number {
  if (Number.isNaN(value)) throw new EvaluationError(`${what} is NaN`);
  if (!Number.isFinite(value))
    throw new EvaluationError(`${what} is ${value > 0 ? "+Inf" : "-Inf"}`);
  return value;
}

function aggregate(name: FunctionName, values: readonly number[]): number {
  if (name === "len") return values.length;
  values.forEach((v, i) => finite(v, `result[${String(i)}]`));
  if (name === "sum") return values.reduce((a, b) => a + b, 0);
  if (values.length === 0)
    throw new EvaluationError(`${name}(result) of an empty result`);
  if (name === "avg") return values.reduce((a, b) => a + b, 0) / values.length;
  return name === "min" ? Math.min(...values) : Math.max(...values);
}

function evaluate(
  node: ConditionNode,
  values: readonly number[],
): number | boolean {
  switch (node.type) {
    case "number":
    case "boolean":
      return node.value;
    case "element": {
      const value = values[node.index];
      if (value === undefined)
        throw new EvaluationError(
          `result has ${String(values.length)} value${values.length === 1 ? "" : "s"}: result[${String(node.index)}] does not exist`,
        );
      return finite(value, `result[${String(node.index)}]`);
    }
    case "call":
      return aggregate(node.name, values);
    case "negate":
      return -(evaluate(node.operand, values) as number);
    case "not":
      return !(evaluate(node.operand, values) as boolean);
    case "arithmetic": {
      const left = evaluate(node.left, values) as number;
      const right = evaluate(node.right, values) as number;
      if (node.op === "/" && right === 0)
        throw new EvaluationError("division by zero");
      const value =
        node.op === "+"
          ? left + right
          : node.op === "-"
            ? left - right
            : node.op === "*"
              ? left * right
              : left / right;
      return finite(value, "a computed value");
    }
    case "compare": {
      const left = evaluate(node.left, values) as number;
      const right = evaluate(node.right, values) as number;
      switch (node.op) {
        case "<":
          return left < right;
        case "<=":
          return left <= right;
        case ">":
          return left > right;
        case ">=":
          return left >= right;
        case "==":
          return left === right;
        case "!=":
          return left !== right;
      }
      break;
    }
    case "logical": {
      // Both sides are evaluated: an error on either side is never hidden by the other.
      const left = evaluate(node.left, values) as boolean;
      const right = evaluate(node.right, values) as boolean;
      return node.op === "&&" ? left && right : left || right;
    }
  }
}

/**
 * Evaluates `condition` on `values` (the query's numbers: one per series of a vector, or the
 * scalar alone). Never throws: what stops evaluation is the outcome's reason.
 */
export function evaluateCondition(
  condition: Condition,
  values: readonly number[],
): ConditionOutcome {
  try {
    return { ok: true, value: evaluate(condition.tree, values) as boolean };
  } catch (error) {
    if (error instanceof EvaluationError)
      return { ok: false, reason: error.message };
    throw error;
  }
}
