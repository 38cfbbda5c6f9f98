// A hub logger whose JSON lines a test can read back, parsed.
import { Writable } from "node:stream";
import { createLogger, type Logger, type LogLevel } from "../src/logger.js";

/** One parsed log line. */
export type LogLine = Record<string, unknown>;

/** A logger at `level` and the lines it has written so far. */
export function capturedLogger(level: LogLevel = "info"): {
  readonly lines: LogLine[];
  readonly log: Logger;
} {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line !== "") lines.push(JSON.parse(line) as LogLine);
      }
      callback();
    },
  });
  return { lines, log: createLogger(level, { destination }) };
}

/** The sample of `series` (`name{labels}` as prom-client writes it) in `text`, or undefined. */
export function metricSample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
