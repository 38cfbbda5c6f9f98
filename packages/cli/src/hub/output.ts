/**
 * Printing the hub's answers: JSON for machines (the response as the hub sent it: camelCase fields,
 * enums by name, 64-bit numbers as numbers, bytes as base64), or lines for people.
 */
import type { CliIo } from "../io.js";

/**
 * The response without the loader's artefacts: proto-loader marks each proto3 `optional` field
 * that is set with a synthetic `_field: "field"` entry, which says nothing the field does not.
 */
export function plainJson(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (Array.isArray(value)) return value.map(plainJson);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (key.startsWith("_")) continue;
    out[key] = plainJson(field);
  }
  return out;
}

/** Prints `value` ({@link plainJson}) as 2-space JSON with a trailing newline. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(plainJson(value), null, 2)}\n`);
}

/** Prints `value` as one line of JSON (streams: one event a line). */
export function printJsonLine(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(plainJson(value))}\n`);
}

/** Prints lines with a trailing newline. */
export function printLines(io: CliIo, lines: readonly string[]): void {
  io.stdout(lines.length === 0 ? "" : `${lines.join("\n")}\n`);
}
