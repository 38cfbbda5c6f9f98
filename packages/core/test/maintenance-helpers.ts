import { formatProblem } from "../src/result.js";
import {
  parseMaintenance,
  type Maintenance,
} from "../src/maintenance/windows.js";

/** Parses a maintenance block that the test expects to be valid. */
export function maintenance(raw: unknown): Maintenance {
  const parsed = parseMaintenance(raw);
  if (!parsed.ok)
    throw new Error(parsed.problems.map(formatProblem).join("\n"));
  return parsed.value;
}

/** Epoch ms of an ISO timestamp, failing loudly on a typo. */
export function at(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`bad timestamp in test: ${iso}`);
  return ms;
}

/** The instants among `isos` at which `open` holds. */
export function openOnes(
  open: (tMs: number) => boolean,
  isos: readonly string[],
): string[] {
  return isos.filter((iso) => open(at(iso)));
}
