/**
 * A scrape target for tests: `/metrics` in the Prometheus text format on 127.0.0.1, serving gauges
 * the test sets and changes while a real Prometheus scrapes it (an error rate that rises
 * mid-rollout, a series that goes away).
 */
import { FlotillaError } from "@flotilla/core";
import { serveLoopback } from "./loopback-http.js";

/** Labels of one series. */
export type MetricLabels = Readonly<Record<string, string>>;

/** A running target. */
export interface MetricsTarget extends AsyncDisposable {
  /** `127.0.0.1:PORT`, as a Prometheus `static_configs` target. */
  readonly address: string;
  /** Sets the gauge `name` with `labels` to `value` (NaN and ±Infinity included). */
  set(name: string, labels: MetricLabels, value: number): void;
  /** Takes the series of `name` with exactly `labels` away; every series of `name` without. */
  remove(name: string, labels?: MetricLabels): void;
  /** The exposition text served now. */
  text(): string;
  /** How many times `/metrics` was fetched. */
  readonly scrapes: number;
  close(): Promise<void>;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Starts a target with no series; set gauges with {@link MetricsTarget.set}. */
export async function startMetricsTarget(): Promise<MetricsTarget> {
  // name → (series text → value); Maps keep the order series were first set, which the text keeps.
  const gauges = new Map<string, Map<string, number>>();
  let scrapes = 0;
  const text = (): string => {
    const lines: string[] = [];
    for (const [name, series] of gauges) {
      if (series.size === 0) continue;
      // HELP too: promtool's lint asks for it.
      lines.push(
        `# HELP ${name} A gauge the test sets.`,
        `# TYPE ${name} gauge`,
      );
      for (const [labels, value] of series)
        lines.push(`${name}${labels} ${formatValue(value)}`);
    }
    return lines.map((line) => `${line}\n`).join("");
  };
  const server = await serveLoopback((request, response) => {
    if (request.method !== "GET" || request.url?.split("?")[0] !== "/metrics") {
      response.writeHead(404).end();
      return;
    }
    scrapes++;
    response
      .writeHead(200, { "content-type": "text/plain; version=0.0.4" })
      .end(text());
  });
  const close = (): Promise<void> => server.close();
  return {
    address: `127.0.0.1:${String(server.port)}`,
    set(name, labels, value) {
      const key = labelText(name, labels);
      let series = gauges.get(name);
      if (series === undefined) {
        series = new Map();
        gauges.set(name, series);
      }
      series.set(key, value);
    },
    remove(name, labels) {
      if (labels === undefined) gauges.delete(name);
      else gauges.get(name)?.delete(labelText(name, labels));
    },
    text,
    get scrapes() {
      return scrapes;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** `{a="1",b="2"}` with names sorted and values escaped as the text format wants; "" for none. */
function labelText(name: string, labels: MetricLabels): string {
  if (!METRIC_NAME.test(name))
    throw new FlotillaError(
      "invalid_argument",
      `Cannot set metric "${name}": not a Prometheus metric name`,
    );
  const names = Object.keys(labels).sort();
  for (const label of names)
    if (!LABEL_NAME.test(label) || label.startsWith("__"))
      throw new FlotillaError(
        "invalid_argument",
        `Cannot set metric "${name}": "${label}" is not a label name a target may use`,
      );
  if (names.length === 0) return "";
  const pairs = names.map(
    (label) =>
      `${label}="${(labels[label] ?? "").replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`,
  );
  return `{${pairs.join(",")}}`;
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}
