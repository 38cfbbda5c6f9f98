/**
 * Fenced intent writes (docs/architecture.md#fenced-writes). When several hubs share the work,
 * each unit of scheduling work (a staged run, the bundle rollouts) has one owner at a time, and
 * the owner's lease has an epoch: a number that only grows, one per acquisition. A write to an
 * intent may carry its writer's fence, `{ unit, epoch }`; the stored intent remembers, per unit,
 * the highest epoch that wrote it, and a write whose epoch is lower than that is refused. So an
 * owner that was deposed (paused past its lease, cut off, slow) cannot change an intent after a
 * newer owner of the same unit has written it.
 *
 * The map is stored beside the intent document, never in it (agents refuse unknown fields), in the
 * {@link INTENT_FENCES_HEADER} header of the write: `run/a=41,bundles=7`.
 */
import {
  fail,
  FlotillaError,
  ok,
  showValue,
  type Problem,
  type Result,
} from "@flotilla/core";

/** Who writes: a unit of work (`run/<name>`, `bundles`) and the epoch of its owner's lease. */
export interface Fence {
  readonly unit: string;
  /** The lease's epoch: a positive integer that only grows for each new owner. */
  readonly epoch: number;
}

/** Per unit, the highest epoch that wrote an intent. */
export type FenceMap = ReadonlyMap<string, number>;

/** The map of an intent no fenced write has touched. */
export const NO_FENCES: FenceMap = new Map();

/**
 * How many units a stored map keeps: the ones with the highest epochs. A unit drops out only after
 * this many other units, all holding leases taken after its newest writer's, have written the same
 * cluster's intent; a writer that stale would also have to outlast all of them. Sixteen units is
 * far more than ever share one cluster at a time (its staged runs and the bundle rollouts) and
 * keeps the header under 2 KiB. A unit that dropped out is not refused: refusing every epoch below
 * the kept ones would refuse a current owner whose lease is merely old (the bundle rollouts' lease
 * can be held for days while runs come and go).
 */
export const MAX_FENCED_UNITS = 16;

/** The header of an intent write that holds its {@link FenceMap}. */
export const INTENT_FENCES_HEADER = "Flotilla-Fences";

/** Longest unit name (`run/` and a 63-character run name fit); with {@link MAX_FENCED_UNITS} it bounds the header. */
export const MAX_FENCE_UNIT_LENGTH = 100;

const UNIT_PATTERN = /^[A-Za-z0-9][-A-Za-z0-9_./]*$/;

/** Why `unit` cannot name a fenced unit, or undefined. */
function unitProblem(unit: string): string | undefined {
  if (unit.length > MAX_FENCE_UNIT_LENGTH || !UNIT_PATTERN.test(unit)) {
    return `must be 1 to ${String(MAX_FENCE_UNIT_LENGTH)} characters of A-Z, a-z, 0-9, '-', '_', '.' and '/', starting alphanumeric`;
  }
  return undefined;
}

function epochProblem(epoch: number): string | undefined {
  return Number.isSafeInteger(epoch) && epoch > 0
    ? undefined
    : "must be a positive integer";
}

/** Every problem of a fence a caller passed, with its field path (`fence.unit`, `fence.epoch`). */
function fenceProblems(fence: Fence): Problem[] {
  const problems: Problem[] = [];
  const unit = unitProblem(fence.unit);
  if (unit !== undefined) {
    problems.push({ path: "fence.unit", message: unit, value: fence.unit });
  }
  const epoch = epochProblem(fence.epoch);
  if (epoch !== undefined) {
    problems.push({ path: "fence.epoch", message: epoch, value: fence.epoch });
  }
  return problems;
}

/** Throws `invalid_argument` naming every bad field of `fence`; passes undefined through. */
export function checkFence(fence: Fence | undefined): Fence | undefined {
  if (fence === undefined) return undefined;
  const problems = fenceProblems(fence);
  if (problems.length > 0) throw FlotillaError.invalid("fence", problems);
  return fence;
}

/**
 * A write refused because a newer owner of the writer's unit has written the intent.
 * `failed_precondition`, like a stale generation: retrying the same write cannot succeed, the
 * writer must stop acting for the unit (and take its lease again to go on).
 */
export class FencedError extends FlotillaError {
  constructor(
    what: string,
    readonly cluster: string,
    readonly fence: Fence,
    readonly storedEpoch: number,
  ) {
    super(
      "failed_precondition",
      `${what}: unit ${showValue(fence.unit)} has written it at epoch ${String(storedEpoch)}, and this writer's epoch is ${String(fence.epoch)} (a newer owner of the unit took over)`,
    );
  }
}

/** True for the error of a write from a deposed owner: stop acting for the unit. */
export function isFenced(error: unknown): error is FencedError {
  return error instanceof FencedError;
}

/**
 * The rule every adapter enforces: the map to store with a write fenced by `fence` over the
 * `stored` map (the same map for an unfenced write, or when nothing changes), or a
 * {@link FencedError} when the stored map holds a higher epoch for the unit. `what` starts the
 * error's message.
 */
export function applyFence(
  stored: FenceMap,
  fence: Fence | undefined,
  cluster: string,
  what: string,
): FenceMap {
  if (fence === undefined) return stored;
  const storedEpoch = stored.get(fence.unit);
  if (storedEpoch !== undefined && storedEpoch > fence.epoch) {
    throw new FencedError(what, cluster, fence, storedEpoch);
  }
  if (storedEpoch === fence.epoch) return stored;
  const raised = bounded(new Map([...stored, [fence.unit, fence.epoch]]));
  // A unit older than every kept one drops out at once: the stored map stays as it is.
  return raised.has(fence.unit) ? raised : stored;
}

/** The {@link MAX_FENCED_UNITS} entries with the highest epochs, highest first. */
function bounded(fences: FenceMap): FenceMap {
  const entries = [...fences].sort(
    ([unitA, a], [unitB, b]) => b - a || (unitA < unitB ? -1 : 1),
  );
  return new Map(entries.slice(0, MAX_FENCED_UNITS));
}

/** The header value of `fences` (`run/a=41,bundles=7`), or undefined when there are none. */
export function encodeFences(fences: FenceMap): string | undefined {
  if (fences.size === 0) return undefined;
  return [...bounded(fences)]
    .map(([unit, epoch]) => `${unit}=${String(epoch)}`)
    .join(",");
}

/** Parses a stored header value; a missing header is the empty map. */
export function parseFences(text: string | undefined): Result<FenceMap> {
  if (text === undefined || text === "") return ok(NO_FENCES);
  const fences = new Map<string, number>();
  const problems: Problem[] = [];
  for (const [i, entry] of text.split(",").entries()) {
    const path = `${INTENT_FENCES_HEADER}[${String(i)}]`;
    const at = entry.lastIndexOf("=");
    const unit = entry.slice(0, at);
    const epochText = entry.slice(at + 1);
    const epoch = /^[0-9]+$/.test(epochText) ? Number(epochText) : NaN;
    const problem =
      at < 0
        ? "must be <unit>=<epoch>"
        : (unitProblem(unit) ??
          epochProblem(epoch) ??
          (fences.has(unit) ? "names a unit twice" : undefined));
    if (problem === undefined) fences.set(unit, epoch);
    else problems.push({ path, message: problem, value: entry });
  }
  return problems.length === 0 ? ok(fences) : fail(problems);
}
