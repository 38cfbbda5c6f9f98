/**
 * Warnings for Fleet rollout settings that disable or weaken a gate (docs/semantics.md#releasing:
 * "plan warns about this and about other settings that disable a gate"). Each names the setting and
 * what to change.
 */
import { intOrPercentToString, type IntOrPercent } from "../int-or-percent.js";
import type { PlanWarning } from "../preview-types.js";
import type { FleetLimits, Partition } from "./partitions.js";
import {
  FLEET_STRATEGY_DEFAULTS,
  type FleetRolloutStrategy,
} from "./strategy.js";

/** How many cluster names a warning lists before "and N more". */
const LISTED_NAMES = 5;

/** `a, b, c, d, e and 2 more`: the first names of a list, for a warning. */
export function listNames(names: readonly string[]): string {
  const listed = names.slice(0, LISTED_NAMES).join(", ");
  return names.length > LISTED_NAMES
    ? `${listed} and ${String(names.length - LISTED_NAMES)} more`
    : listed;
}

const show = (v: IntOrPercent): string =>
  v.kind === "int"
    ? intOrPercentToString(v)
    : JSON.stringify(intOrPercentToString(v));

const isZeroPercent = (v: IntOrPercent | undefined): boolean =>
  v?.kind === "percent" && v.value === 0;

/** Warnings for `strategy` as formed into `partitions`; order is stable (one check after another). */
export function fleetWarnings(
  strategy: FleetRolloutStrategy,
  partitions: readonly Partition[],
  limits: FleetLimits,
  unassigned: readonly string[],
): PlanWarning[] {
  const warnings: PlanWarning[] = [];
  const add = (code: string, message: string): void => {
    warnings.push({ code, message });
  };
  const targetCount =
    partitions.reduce((sum, p) => sum + p.clusters.length, 0) +
    unassigned.length;
  const filled = partitions.filter((p) => p.clusters.length > 0);

  for (const message of negativeValues(strategy)) add("NegativeValue", message);

  if (strategy.maxNew === 0) {
    add(
      "MaxNewZero",
      "maxNew 0: no cluster is ever released, so nothing is deployed or updated",
    );
  }

  // A partition whose limit covers all its clusters can never be NotReady
  // (docs/semantics.md#releasing, the defaults).
  const ungated = filled.filter((p) => p.maxUnavailable >= p.clusters.length);
  if (filled.length > 0 && ungated.length === filled.length) {
    add(
      "MaxUnavailableDisablesGates",
      `maxUnavailable ${show(strategy.maxUnavailable)}: no partition can ever be NotReady, so partitions never gate and only maxNew (${String(limits.maxNew)} per pass) paces the rollout; set maxUnavailable, e.g. "10%"`,
    );
  } else {
    // The last partition's state gates nothing, so only earlier ones are worth a warning.
    const last = partitions[partitions.length - 1];
    for (const p of ungated) {
      if (p === last) continue;
      add(
        "PartitionNeverGates",
        `partition "${p.name}": maxUnavailable resolves to ${String(p.maxUnavailable)} of its ${String(p.clusters.length)} cluster(s), so it is never NotReady and never holds back later partitions; use maxUnavailable: 0 to wait until all of them are Ready`,
      );
    }
  }

  // The pass only stops after a partition; stopping after the last one holds nothing back.
  if (
    partitions.length > 1 &&
    limits.maxUnavailablePartitions >= partitions.length - 1
  ) {
    add(
      "MaxUnavailablePartitionsNoGate",
      `maxUnavailablePartitions ${show(strategy.maxUnavailablePartitions)} resolves to ${String(limits.maxUnavailablePartitions)} with ${String(partitions.length)} partitions: the rollout never stops at a NotReady partition`,
    );
  }

  for (const where of zeroPercentFields(strategy)) {
    add(
      "ZeroPercentIsOne",
      `${where} "0%" resolves to 1, not 0 (percentages are at least 1); write the integer 0 for strict readiness`,
    );
  }

  if (unassigned.length > 0) {
    add(
      "UnassignedClusters",
      `manual partitions leave ${String(unassigned.length)} cluster(s) undeployed: ${listNames(unassigned)}; add partitions for them or set unassigned: autoPartition to deploy them after the manual partitions`,
    );
  }

  strategy.partitions.forEach((spec) => {
    const formed = partitions.find((p) => p.name === spec.name && !p.auto);
    if (formed === undefined || formed.clusters.length > 0) return;
    const none =
      spec.clusterName === undefined &&
      spec.clusterSelector === undefined &&
      spec.clusterGroup === undefined &&
      spec.clusterGroupSelector === undefined;
    add(
      "EmptyPartition",
      none
        ? `partition "${spec.name}" sets none of clusterName, clusterSelector, clusterGroup, clusterGroupSelector, so it holds no cluster`
        : `partition "${spec.name}" holds no cluster (none matches, or each match belongs to an earlier partition)`,
    );
  });

  const sizeSet = !sameValue(
    strategy.autoPartitionSize,
    FLEET_STRATEGY_DEFAULTS.autoPartitionSize,
  );
  if (
    strategy.partitions.length === 0 &&
    partitions.length === 1 &&
    targetCount > 1
  ) {
    const size = strategy.autoPartitionSize;
    const reason =
      size.kind === "int" && size.value <= 0
        ? `autoPartitionSize ${show(size)} turns automatic partitioning off`
        : strategy.autoPartitionThreshold <= 0
          ? `autoPartitionThreshold ${String(strategy.autoPartitionThreshold)} turns automatic partitioning off`
          : targetCount < strategy.autoPartitionThreshold && sizeSet
            ? `${String(targetCount)} clusters are below autoPartitionThreshold ${String(strategy.autoPartitionThreshold)}, so autoPartitionSize ${show(size)} has no effect`
            : undefined;
    if (reason !== undefined) {
      add(
        "AutoPartitionDisabled",
        `${reason}: all ${String(targetCount)} clusters are in one partition`,
      );
    }
  }
  if (
    strategy.partitions.length > 0 &&
    strategy.unassigned === "report" &&
    sizeSet
  ) {
    add(
      "AutoPartitionSizeIgnored",
      `autoPartitionSize ${show(strategy.autoPartitionSize)} is ignored with manual partitions (unless unassigned: autoPartition)`,
    );
  }
  return warnings;
}

/**
 * Fleet accepts negative numbers, so flotilla does too (docs/semantics.md#negative-values); each
 * one is named with what it resolves to, since it is most likely a mistake.
 */
function negativeValues(strategy: FleetRolloutStrategy): string[] {
  const out: string[] = [];
  const check = (
    field: string,
    value: IntOrPercent | undefined,
    offWhenInt = false,
  ): void => {
    if (value === undefined || value.value >= 0) return;
    const head = `${field} ${show(value)} is negative:`;
    if (value.kind === "int")
      out.push(
        offWhenInt
          ? `${head} automatic partitioning is off, as in Fleet (as with 0)`
          : `${head} it resolves to 0, as in Fleet (a negative integer counts as 0)`,
      );
    else
      out.push(
        `${head} it resolves to 1, as in Fleet (a percentage resolves to at least 1)${offWhenInt ? ", so each automatic partition holds one cluster" : ""}`,
      );
  };
  check("maxUnavailable", strategy.maxUnavailable);
  check("maxUnavailablePartitions", strategy.maxUnavailablePartitions);
  check("autoPartitionSize", strategy.autoPartitionSize, true);
  check(
    "autoPartitionThreshold",
    { kind: "int", value: strategy.autoPartitionThreshold },
    true,
  );
  strategy.partitions.forEach((p, i) => {
    check(`partitions[${String(i)}].maxUnavailable`, p.maxUnavailable);
  });
  return out;
}

function zeroPercentFields(strategy: FleetRolloutStrategy): string[] {
  const out: string[] = [];
  if (isZeroPercent(strategy.maxUnavailable)) out.push("maxUnavailable");
  if (isZeroPercent(strategy.maxUnavailablePartitions))
    out.push("maxUnavailablePartitions");
  strategy.partitions.forEach((p, i) => {
    if (isZeroPercent(p.maxUnavailable))
      out.push(`partitions[${String(i)}].maxUnavailable`);
  });
  return out;
}

function sameValue(a: IntOrPercent, b: IntOrPercent): boolean {
  return a.kind === b.kind && a.value === b.value;
}
