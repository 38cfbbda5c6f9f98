/**
 * Reading the JSON answer of Prometheus's instant query API (`/api/v1/query`) into the numbers a
 * metric gate judges (docs/running.md#prometheus). Only instant vectors and scalars are numbers; a
 * range vector (a `[5m]` selector left at the top level) and a string are refused with a reason,
 * never read as an empty or partial result.
 */
import type { QueryOutcome } from "@flotilla/core";

/**
 * The numbers of a parsed `/api/v1/query` answer: one per series of a vector, sorted by the
 * series' label set (see {@link compareLabelSets}) so that `result[0]` names the same series on every
 * query; one for a scalar. `status: "error"` gives Prometheus's own error text.
 */
export function queryOutcomeOf(body: unknown): QueryOutcome {
  if (!isRecord(body)) return notAResult("the answer is not a JSON object");
  if (body["status"] === "error")
    return {
      ok: false,
      reason: `Prometheus refused the query: ${errorText(body)}`,
    };
  if (body["status"] !== "success")
    return notAResult(`"status" is ${describe(body["status"])}`);
  const data = body["data"];
  if (!isRecord(data)) return notAResult(`"data" is ${describe(data)}`);
  const resultType = data["resultType"];
  const result = data["result"];
  switch (resultType) {
    case "vector":
      return vectorValues(result);
    case "scalar": {
      const value = sampleValue(result);
      return value === undefined
        ? notAResult(`the scalar is ${describe(result)}`)
        : { ok: true, values: [value] };
    }
    case "matrix":
      return {
        ok: false,
        reason:
          "the query returned a range vector: use an instant query (no [5m] selector at the top level)",
      };
    case "string":
      return {
        ok: false,
        reason: "the query returned a string, not a number",
      };
    default:
      return notAResult(`"data.resultType" is ${describe(resultType)}`);
  }
}

/**
 * Prometheus's error text of a failed answer (`errorType: error`, e.g. `bad_data: 1:5: parse
 * error: ...`), or undefined when the body is not one: an HTTP error status often comes with it.
 */
export function prometheusError(body: unknown): string | undefined {
  return isRecord(body) && body["status"] === "error"
    ? errorText(body)
    : undefined;
}

function errorText(body: Record<string, unknown>): string {
  const type = body["errorType"];
  const error = body["error"];
  const text = typeof error === "string" && error !== "" ? error : "no detail";
  return typeof type === "string" && type !== "" ? `${type}: ${text}` : text;
}

function vectorValues(result: unknown): QueryOutcome {
  if (!Array.isArray(result))
    return notAResult(`the vector is ${describe(result)}`);
  const series: { labels: LabelPairs; value: number }[] = [];
  for (const [index, item] of result.entries()) {
    const metric = isRecord(item) ? item["metric"] : undefined;
    const value = isRecord(item) ? sampleValue(item["value"]) : undefined;
    if (!isRecord(metric) || value === undefined)
      return notAResult(
        `series ${String(index)} of the vector is not {metric, value: [time, "number"]}`,
      );
    series.push({ labels: labelPairs(metric), value });
  }
  series.sort((a, b) => compareLabelSets(a.labels, b.labels));
  return { ok: true, values: series.map((s) => s.value) };
}

/** A series' labels as `[name, value]` pairs sorted by name (`__name__`, the metric, first). */
type LabelPairs = readonly (readonly [string, string])[];

function labelPairs(metric: Readonly<Record<string, unknown>>): LabelPairs {
  return Object.keys(metric)
    .sort(compareText)
    .map((name) => [name, String(metric[name])] as const);
}

/**
 * The order of series in a query's numbers: label sets compared pair by pair, name then value, a
 * set that is the start of another first (`{a="1"}` before `{a="1",b="2"}` before `{a="2"}`).
 * Two series of one answer never have the same labels, so the order is total.
 */
export function compareLabelSets(a: LabelPairs, b: LabelPairs): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const [nameA = "", valueA = ""] = a[i] ?? [];
    const [nameB = "", valueB = ""] = b[i] ?? [];
    const order = compareText(nameA, nameB) || compareText(valueA, valueB);
    if (order !== 0) return order;
  }
  return a.length - b.length;
}

/** Plain code-unit order, not localeCompare: the same on every host whatever its locale. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `[time, "value"]` to a number: Prometheus writes NaN and the infinities as NaN, +Inf, -Inf. */
function sampleValue(sample: unknown): number | undefined {
  if (!Array.isArray(sample) || sample.length !== 2) return undefined;
  const text: unknown = sample[1];
  if (typeof text !== "string") return undefined;
  switch (text) {
    case "NaN":
      return Number.NaN;
    // Number("+Inf") is NaN: JavaScript spells it Infinity.
    case "+Inf":
    case "Inf":
      return Number.POSITIVE_INFINITY;
    case "-Inf":
      return Number.NEGATIVE_INFINITY;
    default: {
      const value = text.trim() === "" ? Number.NaN : Number(text);
      return Number.isNaN(value) ? undefined : value;
    }
  }
}

function notAResult(why: string): QueryOutcome {
  return {
    ok: false,
    reason: `the answer is not a Prometheus query result: ${why}`,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return "missing";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
