/**
 * The `flotilla simulate` scenario file (docs/plan-and-simulate.md): virtual start time, what
 * kind of change rolls out, how each cluster behaves, when operators approve gates and act on the
 * run, and when to give up.
 */
import type { QueryOutcome } from "./metrics/analysis.js";
import { z } from "zod";
import { parseInstant } from "./maintenance/calendar.js";
import { fail, ok, type Problem, type Result } from "./result.js";
import {
  actionField,
  resolveActions,
  type ScenarioAction,
} from "./scenario-actions.js";
import { parseWith, strictObject } from "./schema.js";
import { upgradeField, type UpgradePayload } from "./upgrade.js";
import {
  availableVersionsField,
  kubernetesOfferField,
  nodeImageOfferField,
  type AvailableVersions,
} from "./versions/version.js";
import { compact } from "./compact.js";

/** How one cluster behaves in a simulation. */
export interface ClusterBehaviour {
  /** Time from release (or start) to Ready / Succeeded. */
  readonly readyAfterSeconds: number;
  /** Every attempt fails (unless `failAttempts` says how many). */
  readonly fail: boolean;
  /** Only the first N attempts fail; a retried member then succeeds. */
  readonly failAttempts?: number;
  readonly failAfterSeconds: number;
  /** Applied but never Ready (a partitioned rollout stays NotReady; a staged member times out). */
  readonly neverReady: boolean;
  /** Absolute intervals during which the agent is unreachable. */
  readonly offline: readonly {
    readonly fromMs: number;
    readonly toMs: number;
  }[];
}

/** A parsed scenario; all times are absolute epoch milliseconds. */
export interface Scenario {
  readonly startMs: number;
  readonly kind: "firstDeployment" | "update" | "upgrade";
  readonly upgrade?: UpgradePayload;
  readonly defaults: ClusterBehaviour;
  readonly clusters: Readonly<Record<string, ClusterBehaviour>>;
  readonly approvals: readonly {
    readonly gate: string;
    readonly atMs: number;
  }[];
  readonly autoApprove: boolean;
  /** Operator actions and fleet changes at their times, in the order written. */
  readonly actions: readonly ScenarioAction[];
  readonly progressDeadlineSeconds?: number;
  readonly untilMs: number;
  readonly available?: AvailableVersions;
  /** What the platform starts to offer later, in time order (upgrades only). */
  readonly releases: readonly {
    readonly atMs: number;
    readonly offers: AvailableVersions;
  }[];
  /** Partitioned rollouts: the hub's periodic pass interval (a pass also runs on every change). */
  readonly passIntervalSeconds: number;
  /**
   * What each metric gate's query returns over time, by gate id (docs/engine.md#metric-gates): a
   * measurement at time t gets the last entry at or before t.
   */
  readonly metrics: Readonly<
    Record<
      string,
      readonly { readonly atMs: number; readonly outcome: QueryOutcome }[]
    >
  >;
}

const GATE_ID = /^(stage|group):[a-z0-9-]+:(before|after)(#\d+)?$/;
const GATE_ID_MESSAGE =
  'must look like "stage:NAME:before" or "group:NAME:after"';

const metricValue = z.union([z.number(), z.enum(["NaN", "+Inf", "-Inf"])]);

const metricEntrySchema = strictObject({
  at: z.string(),
  value: metricValue.optional(),
  values: z.array(metricValue).max(1_000).optional(),
  error: z.string().min(1).max(500).optional(),
});

/** A scenario's metric value as a number. */
function metricNumber(value: z.infer<typeof metricValue>): number {
  if (value === "NaN") return Number.NaN;
  if (value === "+Inf") return Number.POSITIVE_INFINITY;
  if (value === "-Inf") return Number.NEGATIVE_INFINITY;
  return value;
}

const RELATIVE = /^\+((?:\d+[dhms])+)$/;
const UNIT_MS: Readonly<Record<string, number>> = {
  d: 86_400_000,
  h: 3_600_000,
  m: 60_000,
  s: 1000,
};

/** Parses "+1h30m" (relative to `startMs`) or an ISO timestamp with a zone; undefined if invalid. */
export function parseScenarioTime(
  text: string,
  startMs: number,
): number | undefined {
  const rel = RELATIVE.exec(text);
  if (rel !== null) {
    let total = 0;
    for (const [, amount, unit] of (rel[1] ?? "").matchAll(/(\d+)([dhms])/g)) {
      total += Number(amount) * (UNIT_MS[unit ?? "s"] ?? 0);
    }
    return startMs + total;
  }
  return parseInstant(text);
}

const seconds = z.number().min(0, "must not be negative");
const timeText = z.string().min(1);

const behaviourSchema = strictObject({
  readyAfterSeconds: seconds.optional(),
  fail: z.boolean().optional(),
  failAttempts: z.number().int().min(1, "must be at least 1").optional(),
  failAfterSeconds: seconds.optional(),
  neverReady: z.boolean().optional(),
  offline: z.array(strictObject({ from: timeText, to: timeText })).optional(),
});

const releaseSchema = strictObject({
  at: timeText,
  kubernetes: z.array(kubernetesOfferField).optional(),
  nodeImages: z.array(nodeImageOfferField).optional(),
}).superRefine((value, ctx) => {
  if ((value.kubernetes ?? []).length + (value.nodeImages ?? []).length === 0)
    ctx.addIssue({
      code: "custom",
      message: "must offer at least one Kubernetes version or node image",
      input: undefined,
    });
});

const scenarioSchema = strictObject({
  start: timeText,
  kind: z.enum(["firstDeployment", "update", "upgrade"]),
  upgrade: upgradeField.optional(),
  defaults: behaviourSchema.optional(),
  clusters: z.record(z.string(), behaviourSchema).optional(),
  approvals: z
    .array(
      strictObject({
        gate: z.string().regex(GATE_ID, GATE_ID_MESSAGE),
        at: timeText,
      }),
    )
    .optional(),
  autoApprove: z.boolean().optional(),
  actions: z.array(actionField).optional(),
  progressDeadlineSeconds: z
    .number()
    .int()
    .min(1, "must be at least 1")
    .optional(),
  until: timeText.optional(),
  available: availableVersionsField.optional(),
  releases: z.array(releaseSchema).optional(),
  passIntervalSeconds: z.number().min(1, "must be at least 1").optional(),
  metrics: z
    .record(
      z.string().regex(GATE_ID, GATE_ID_MESSAGE),
      z.array(metricEntrySchema).max(10_000),
    )
    .optional(),
});

type RawBehaviour = z.infer<typeof behaviourSchema>;

/** Parses a scenario; `clusterNames` are the known clusters (unknown overrides are an error). */
export function parseScenario(
  raw: unknown,
  clusterNames: ReadonlySet<string>,
): Result<Scenario> {
  const parsed = parseWith(scenarioSchema, raw);
  if (!parsed.ok) return parsed;
  const s = parsed.value;
  const problems: Problem[] = [];
  const startMs = parseInstant(s.start);
  if (startMs === undefined) {
    return fail([
      {
        path: "start",
        message:
          'must be an ISO timestamp with a zone, e.g. "2026-03-02T10:00:00Z"',
        value: s.start,
      },
    ]);
  }
  const time = (text: string, path: string): number => {
    const ms = parseScenarioTime(text, startMs);
    if (ms === undefined) {
      problems.push({
        path,
        message:
          'must be a relative time like "+5m", "+1h30m", "+7d" or an ISO timestamp',
        value: text,
      });
      return startMs;
    }
    return ms;
  };
  const behaviour = (
    b: RawBehaviour | undefined,
    base: ClusterBehaviour,
    path: string,
  ): ClusterBehaviour => {
    if (b?.fail !== undefined && b.failAttempts !== undefined)
      problems.push({
        path: `${path}.failAttempts`,
        message:
          "give fail (every attempt fails) or failAttempts (the first N fail), not both",
        value: b.failAttempts,
      });
    // An override that sets either field replaces the base's failure rule as a whole.
    const failAttempts =
      b?.failAttempts ??
      (b?.fail === undefined ? base.failAttempts : undefined);
    return {
      readyAfterSeconds: b?.readyAfterSeconds ?? base.readyAfterSeconds,
      fail: b?.fail ?? (b?.failAttempts === undefined ? base.fail : false),
      ...compact({ failAttempts }),
      failAfterSeconds: b?.failAfterSeconds ?? base.failAfterSeconds,
      neverReady: b?.neverReady ?? base.neverReady,
      offline: (b?.offline ?? []).map((o, i) => {
        const fromMs = time(o.from, `${path}.offline[${String(i)}].from`);
        const toMs = time(o.to, `${path}.offline[${String(i)}].to`);
        if (toMs <= fromMs)
          problems.push({
            path: `${path}.offline[${String(i)}].to`,
            message: "must be after from",
            value: o.to,
          });
        return { fromMs, toMs };
      }),
    };
  };
  const defaults = behaviour(
    s.defaults,
    {
      readyAfterSeconds: 60,
      fail: false,
      failAfterSeconds: 60,
      neverReady: false,
      offline: [],
    },
    "defaults",
  );
  const clusters: Record<string, ClusterBehaviour> = {};
  for (const [name, b] of Object.entries(s.clusters ?? {})) {
    if (!clusterNames.has(name))
      problems.push({
        path: `clusters.${name}`,
        message: "no cluster with this name in the clusters file",
        value: name,
      });
    clusters[name] = behaviour(b, defaults, `clusters.${name}`);
  }
  if (s.kind === "upgrade" && s.upgrade === undefined)
    problems.push({
      path: "upgrade",
      message: "is required when kind is upgrade",
    });
  if (s.kind !== "upgrade" && s.upgrade !== undefined)
    problems.push({
      path: "upgrade",
      message: `is only allowed when kind is upgrade (kind is ${s.kind})`,
    });
  const approvals = (s.approvals ?? []).map((a, i) => ({
    gate: a.gate,
    atMs: time(a.at, `approvals[${String(i)}].at`),
  }));
  const actions = resolveActions(
    s.actions ?? [],
    time,
    startMs,
    clusterNames,
    problems,
  );
  const releases = (s.releases ?? []).map((r, i) => {
    const atMs = time(r.at, `releases[${String(i)}].at`);
    if (atMs < startMs)
      problems.push({
        path: `releases[${String(i)}].at`,
        message: "must not be before start",
        value: r.at,
      });
    return {
      atMs,
      offers: {
        kubernetes: r.kubernetes ?? [],
        nodeImages: r.nodeImages ?? [],
      },
    };
  });
  if (s.kind !== "upgrade" && s.releases !== undefined)
    problems.push({
      path: "releases",
      message: `is only allowed when kind is upgrade (kind is ${s.kind}): bundle revisions do not depend on what the platform offers`,
    });
  const metrics: Record<
    string,
    { readonly atMs: number; readonly outcome: QueryOutcome }[]
  > = {};
  for (const [gate, entries] of Object.entries(s.metrics ?? {})) {
    metrics[gate] = entries
      .map((e, i) => {
        const path = `metrics.${gate}[${String(i)}]`;
        const given = [e.value, e.values, e.error].filter(
          (x) => x !== undefined,
        ).length;
        if (given !== 1)
          problems.push({
            path,
            message: "give exactly one of value, values or error",
          });
        const outcome: QueryOutcome =
          e.error !== undefined
            ? { ok: false, reason: e.error }
            : {
                ok: true,
                values: (
                  e.values ?? (e.value === undefined ? [] : [e.value])
                ).map(metricNumber),
              };
        return { atMs: time(e.at, `${path}.at`), outcome };
      })
      // Stable: entries at the same time keep the order written (the last one counts).
      .sort((a, b) => a.atMs - b.atMs);
  }
  const untilMs = time(s.until ?? "+7d", "until");
  if (untilMs <= startMs)
    problems.push({
      path: "until",
      message: "must be after start",
      value: s.until,
    });
  if (problems.length > 0) return fail(problems);
  return ok({
    startMs,
    kind: s.kind,
    ...compact({ upgrade: s.upgrade }),
    defaults,
    clusters,
    approvals,
    autoApprove: s.autoApprove ?? false,
    actions,
    ...compact({ progressDeadlineSeconds: s.progressDeadlineSeconds }),
    untilMs,
    // With releases but no `available`, the platform offers nothing until the first release.
    ...(s.available === undefined && s.releases === undefined
      ? {}
      : { available: s.available ?? { kubernetes: [], nodeImages: [] } }),
    // Stable: releases at the same time apply in the order written.
    releases: releases.sort((a, b) => a.atMs - b.atMs),
    passIntervalSeconds: s.passIntervalSeconds ?? 5,
    metrics,
  });
}

/** Whether a cluster's `attempt`-th start (1-based) fails. */
export function failsAttempt(b: ClusterBehaviour, attempt: number): boolean {
  return b.failAttempts === undefined ? b.fail : attempt <= b.failAttempts;
}

/** The behaviour of one cluster (its override, else the defaults). */
export function behaviourOf(
  scenario: Scenario,
  cluster: string,
): ClusterBehaviour {
  // By own key: a cluster may be named "constructor", which every object inherits.
  return Object.hasOwn(scenario.clusters, cluster)
    ? (scenario.clusters[cluster] ?? scenario.defaults)
    : scenario.defaults;
}
