/**
 * The metric gates between a bundle's partitions (docs/semantics.md#partition-gates) as the hub
 * keeps them: one document per (bundle, revision, partition, gate) in the "bundle-gates"
 * collection, apart from the bundle record (which every apply rewrites by compare-and-set), so a
 * restarted or new owner of the bundle passes loses no measurement and a new revision starts
 * fresh. The replica that runs passes takes the measurements core says are due through the hub's
 * Prometheus and audits each one, as for runs (runs/gate-measurements.ts).
 */
import {
  analyse,
  compact,
  judgeGateOutcome,
  judgementOf,
  type FleetGateSpec,
  type Measurement,
  type PartitionGateRecord,
  type PartitionGateStatus,
  type QueryOutcome,
} from "@flotilla/core";
import { z } from "zod";
import type { AuditLog } from "../audit/audit-log.js";
import { hubActor } from "../audit/takeover-audit.js";
import type { Logger } from "../logger.js";
import type { MetricSource } from "../runs/gate-measurements.js";
import { outcomeText } from "../runs/gate-measurements.js";
import { encodeKeyToken, nameKey } from "../store/keys.js";
import {
  defineCollection,
  RevisionConflictError,
  type StateStore,
} from "../store/state-store.js";

/** The method of the audit records of partition gate measurements (the hub acts on its own). */
export const MEASURE_PARTITION_GATE_METHOD =
  "/flotilla.hub/MeasurePartitionGate";

/** Values a stored measurement keeps (the verdict was judged on all of them). */
const MAX_STORED_VALUES = 50;

const measurementSchema = z.object({
  atMs: z.number(),
  // JSON has no NaN: a NaN or infinite value is stored as null and read back as NaN.
  values: z
    .array(z.number().nullable())
    .transform((vs) => vs.map((v) => v ?? Number.NaN))
    .optional(),
  verdict: z.enum(["Successful", "Failed", "Inconclusive"]),
  message: z.string(),
});

const gateDocumentSchema = z.object({
  bundle: z.string(),
  revision: z.string(),
  partition: z.string(),
  gate: z.string(),
  measurements: z.array(measurementSchema),
  approvedBy: z.string().optional(),
});

/** One partition gate's document. */
export type PartitionGateDocument = z.output<typeof gateDocumentSchema>;

/** Collection "bundle-gates": key `<bundle>.<revision>.<partition>.<gate>`, tokens encoded. */
export const BUNDLE_GATES = defineCollection<PartitionGateDocument>(
  "bundle-gates",
  (value) => gateDocumentSchema.parse(value),
);

function bundlePrefix(bundle: string): string {
  return `${nameKey(bundle)}.`;
}

function gateKey(
  bundle: string,
  revision: string,
  partition: string,
  gate: string,
): string {
  return `${bundlePrefix(bundle)}${encodeKeyToken(revision)}.${encodeKeyToken(partition)}.${encodeKeyToken(gate)}`;
}

/** What the partition gates need. */
export interface PartitionGatesDeps {
  readonly store: StateStore;
  /** The hub's Prometheus; absent: bundles with partition gates are refused at apply. */
  readonly source?: MetricSource;
  readonly audit: AuditLog;
  readonly now: () => number;
  readonly log: Logger;
  /** This replica's id, for the actor of the audit records. */
  readonly replica: () => string;
  /**
   * Told once when a measurement makes a partition gate fail (the rollout of that revision halts):
   * where a rollback on a failed gate hooks in.
   */
  readonly onGateFailed?: (failure: {
    readonly bundle: string;
    readonly revision: string;
    readonly partition: string;
    readonly gate: string;
    readonly message: string;
  }) => void;
}

/** The partition gates of every bundle. */
export interface PartitionGates {
  /** Whether measurements can be taken (a Prometheus is configured). */
  readonly measurable: boolean;
  /**
   * The records of `bundle`'s gates at `revision`, for the pass; the documents of its other
   * revisions are deleted (a revision applied again starts fresh).
   */
  recordsOf(
    bundle: string,
    revision: string,
  ): Promise<
    (partition: string, gate: string) => PartitionGateRecord | undefined
  >;
  /** Takes the due measurements of a pass, stores and audits each; never rejects for a query. */
  measure(
    bundle: string,
    revision: string,
    gates: readonly FleetGateSpec[],
    due: readonly PartitionGateStatus[],
  ): Promise<void>;
  /** Records an approval of a gate (overrides Failed and Inconclusive). */
  approve(
    bundle: string,
    revision: string,
    partition: string,
    gate: string,
    actor: string,
  ): Promise<void>;
  /** Deletes every document of `bundle` (it was deleted). */
  forget(bundle: string): Promise<void>;
}

/** `measurement` as stored: at most MAX_STORED_VALUES of its values. */
function storable(
  measurement: Measurement,
): PartitionGateDocument["measurements"][number] {
  return {
    atMs: measurement.atMs,
    verdict: measurement.verdict,
    message: measurement.message,
    ...(measurement.values === undefined
      ? {}
      : { values: measurement.values.slice(0, MAX_STORED_VALUES) }),
  };
}

/** The partition gates over `deps`. */
export function createPartitionGates(deps: PartitionGatesDeps): PartitionGates {
  const { store, log } = deps;

  // Changes one document by compare-and-set, retried when another writer (an approval) won.
  const change = async (
    key: string,
    fresh: PartitionGateDocument,
    update: (doc: PartitionGateDocument) => PartitionGateDocument,
  ): Promise<PartitionGateDocument> => {
    for (let attempt = 0; ; attempt++) {
      const entry = await store.get(BUNDLE_GATES, key);
      const next = update(entry?.value ?? fresh);
      try {
        await store.put(BUNDLE_GATES, key, next, {
          expectedRevision: entry?.revision ?? 0,
        });
        return next;
      } catch (error) {
        if (!(error instanceof RevisionConflictError) || attempt >= 4)
          throw error;
      }
    }
  };

  const ask = async (query: string): Promise<QueryOutcome> => {
    if (deps.source === undefined)
      return {
        ok: false,
        reason:
          "this hub has no Prometheus to ask (start it with --prometheus-url)",
      };
    try {
      return await deps.source.query(query);
    } catch (error) {
      return {
        ok: false,
        reason: error instanceof Error ? error.message : String(error),
      };
    }
  };

  return {
    measurable: deps.source !== undefined,

    async recordsOf(bundle, revision) {
      const found = new Map<string, PartitionGateRecord>();
      for (const entry of await store.list(BUNDLE_GATES, {
        prefix: bundlePrefix(bundle),
      })) {
        const doc = entry.value;
        if (doc.bundle !== bundle) continue;
        if (doc.revision !== revision) {
          await store.delete(BUNDLE_GATES, entry.key).catch((err: unknown) => {
            log.warn({ err, bundle }, "old partition gate record not deleted");
          });
          continue;
        }
        found.set(
          JSON.stringify([doc.partition, doc.gate]),
          compact({
            measurements: doc.measurements,
            approvedBy: doc.approvedBy,
          }),
        );
      }
      return (partition, gate) => found.get(JSON.stringify([partition, gate]));
    },

    async measure(bundle, revision, gates, due) {
      for (const status of due) {
        const spec = gates.find((g) => g.name === status.gate);
        if (spec === undefined) continue;
        const outcome = await ask(status.query);
        const measurement = judgeGateOutcome(spec, outcome, deps.now());
        const key = gateKey(bundle, revision, status.partition, status.gate);
        let doc: PartitionGateDocument;
        try {
          doc = await change(
            key,
            {
              bundle,
              revision,
              partition: status.partition,
              gate: status.gate,
              measurements: [],
            },
            (d) => ({
              ...d,
              measurements: [...d.measurements, storable(measurement)],
            }),
          );
        } catch (err) {
          log.warn(
            { err, bundle, gate: status.gate, partition: status.partition },
            "partition gate measurement not stored",
          );
          continue;
        }
        deps.audit
          .append({
            atMs: deps.now(),
            actor: hubActor(deps.replica()),
            role: "",
            method: MEASURE_PARTITION_GATE_METHOD,
            targetKind: "Bundle",
            targetName: bundle.slice(0, 256),
            reason:
              `gate ${status.gate} after partition ${status.partition} at revision ${revision}`.slice(
                0,
                1024,
              ),
            outcome: "Succeeded",
            message:
              `${status.query} → ${outcomeText(outcome)}: ${measurement.verdict} (${measurement.message})`.slice(
                0,
                1024,
              ),
          })
          .catch((err: unknown) => {
            log.warn(
              { err, bundle, gate: status.gate },
              "audit record of a partition gate measurement lost",
            );
          });
        const state = analyse(judgementOf(spec).judgement, doc.measurements);
        if (state.verdict === "Failed" && doc.approvedBy === undefined) {
          const message = `gate "${status.gate}" after partition "${status.partition}" failed: ${state.message ?? ""}`;
          log.warn(
            {
              bundle,
              revision,
              partition: status.partition,
              gate: status.gate,
            },
            "Partition gate failed; the rollout of the revision halts",
          );
          deps.onGateFailed?.({
            bundle,
            revision,
            partition: status.partition,
            gate: status.gate,
            message,
          });
        }
      }
    },

    async approve(bundle, revision, partition, gate, actor) {
      await change(
        gateKey(bundle, revision, partition, gate),
        { bundle, revision, partition, gate, measurements: [] },
        (d) => ({ ...d, approvedBy: actor }),
      );
    },

    async forget(bundle) {
      for (const entry of await store.list(BUNDLE_GATES, {
        prefix: bundlePrefix(bundle),
      }))
        if (entry.value.bundle === bundle)
          await store.delete(BUNDLE_GATES, entry.key);
    },
  };
}
