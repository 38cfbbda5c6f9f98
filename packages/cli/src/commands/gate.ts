/**
 * `flotilla gate list|approve`: the approval gates of every run, as `az fleet gate` shows them
 * (docs/cli.md#gates). A gate is named by its id (`stage:NAME:before|after` or
 * `group:NAME:before|after`); `approve` finds its run when only one run has that gate waiting.
 */
import {
  GATE_STATE,
  GATE_TYPE,
  MEASUREMENT_VERDICT,
  type wire,
} from "@flotilla/protocol";
import { fail, formatProblems, ok, problem, type Result } from "@flotilla/core";
import { EXIT_ERROR, EXIT_OK } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
} from "../hub/admin-command.js";
import { printJson, printLines } from "../hub/output.js";
import { stateLine } from "../render/run-tree.js";
import { styleState } from "../render/style.js";
import { renderTable, type Column } from "../render/table.js";
import { formatAge } from "../render/time.js";
import type { Noun } from "./command.js";
import { decodeRun } from "./run-decode.js";

/** The form of a gate id. */
export const GATE_ID = /^(stage|group):([^:\s]+):(before|after)$/;

/** `before stage canary`, from the gate's id. */
function whereOf(id: string): string {
  const match = GATE_ID.exec(id);
  return match === null
    ? "-"
    : `${match[3] ?? ""} ${match[1] ?? ""} ${match[2] ?? ""}`;
}

interface Row {
  readonly run: string;
  readonly gate: wire.Gate__Output;
}

function rowsOf(answer: wire.ListGatesResponse__Output): Row[] {
  return answer.gates.flatMap((g) =>
    g.gate === null ? [] : [{ run: g.run, gate: g.gate }],
  );
}

const list = adminCommand({
  name: "gate list",
  summary:
    "list the gates of every run (or of one), e.g. those waiting for approval",
  description:
    "Lists the gates of every run: the run, the gate's id (what gate approve takes), its type,\n" +
    "where it sits (before or after a stage or group), its state and since when it waits.",
  options: {
    state: {
      type: "string",
      valueName: "STATE",
      multiple: true,
      choices: GATE_STATE.values,
      description: "only gates in this state (e.g. Pending); repeatable",
    },
    run: {
      type: "string",
      valueName: "R",
      description: "only the gates of this run",
    },
  },
  prepare: (args) =>
    prepared({
      states: args
        .strings("state")
        .map((s) => GATE_STATE.toWire(s as (typeof GATE_STATE.values)[number])),
      run: args.string("run") ?? "",
    }),
  run: async (ctx, request) => {
    const answer = await ctx.hub.call("listGates", request);
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const rows = rowsOf(answer);
    if (rows.length === 0) {
      printLines(ctx.io, ["No gates."]);
      return EXIT_OK;
    }
    const nowMs = ctx.io.now();
    const columns: Column<Row>[] = [
      { header: "RUN", cell: (r) => r.run },
      { header: "GATE", cell: (r) => r.gate.id },
      { header: "NAME", cell: (r) => r.gate.displayName || "-" },
      {
        header: "TYPE",
        cell: (r) => GATE_TYPE.fromWire(r.gate.type) ?? r.gate.type,
      },
      { header: "WHERE", cell: (r) => whereOf(r.gate.id) },
      {
        header: "STATE",
        cell: (r) =>
          styleState(
            ctx.render.style,
            GATE_STATE.fromWire(r.gate.state) ?? r.gate.state,
          ),
      },
      {
        header: "SINCE",
        cell: (r) =>
          r.gate.reachedAtMs === null || r.gate.reachedAtMs === undefined
            ? "-"
            : formatAge(r.gate.reachedAtMs, nowMs),
      },
      {
        header: "LAST MEASUREMENT",
        cell: (r) => lastMeasurement(r.gate),
      },
    ];
    printLines(ctx.io, renderTable(columns, rows, ctx.render.style));
    return EXIT_OK;
  },
});

/** The run whose gate `gateId` an approval means: the only one where it waits, else the only one. */
function runOf(gateId: string, rows: readonly Row[]): Result<string> {
  const having = rows.filter((r) => r.gate.id === gateId);
  const pending = having.filter(
    (r) => GATE_STATE.fromWire(r.gate.state) === "Pending",
  );
  const runs = (of: readonly Row[]): string[] => [
    ...new Set(of.map((r) => r.run)),
  ];
  const waiting = runs(pending);
  const [only] = waiting;
  if (waiting.length === 1 && only !== undefined) return ok(only);
  if (waiting.length > 1)
    return fail([
      problem(
        `gate ${gateId} waits in several runs (${waiting.join(", ")}): say which with --run R`,
      ),
    ]);
  const all = runs(having);
  const [one] = all;
  if (all.length === 1 && one !== undefined) return ok(one);
  return fail([
    problem(
      all.length === 0
        ? `no run has a gate ${gateId} (see flotilla gate list)`
        : `gate ${gateId} is in several runs (${all.join(", ")}) and waits in none: say which with --run R`,
    ),
  ]);
}

const approve = adminCommand({
  name: "gate approve",
  summary: "approve a pending approval gate, found by its id across runs",
  description:
    "Approves the gate (all gates sharing its id in its run); your identity and reason are\n" +
    "recorded. Without --run the run is the one where the gate waits; when it waits in several\n" +
    "runs, say which with --run.",
  positionals: [
    {
      name: "GATE",
      description:
        "the gate's id as flotilla gate list shows it (stage:NAME:before|after or group:NAME:before|after)",
    },
  ],
  options: {
    run: {
      type: "string",
      valueName: "R",
      description: "the run the gate belongs to (needed when several have it)",
    },
  },
  mutating: true,
  prepare: (args) => {
    const gateId = args.positional("GATE") ?? "";
    if (!GATE_ID.test(gateId))
      return refused([
        usageMessage(
          "gate approve",
          `GATE must be stage:NAME:before|after or group:NAME:before|after (got "${gateId}"; see flotilla gate list)`,
        ),
      ]);
    return prepared({ gateId, run: args.string("run") });
  },
  run: async (ctx, { gateId, run }) => {
    let name = run;
    if (name === undefined) {
      const found = runOf(
        gateId,
        rowsOf(await ctx.hub.call("listGates", { states: [], run: "" })),
      );
      if (!found.ok) {
        ctx.io.stderr(
          `flotilla: gate approve: ${formatProblems(found.problems)}\n`,
        );
        return EXIT_ERROR;
      }
      name = found.value;
    }
    const answer = await ctx.hub.call("approveGate", {
      run: name,
      gateId,
      reason: ctx.reason,
    });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    printLines(ctx.io, [
      `Run ${name}: gate ${gateId} approved.`,
      `  ${stateLine(decodeRun(answer.run), ctx.render)}`,
    ]);
    return EXIT_OK;
  },
});

/** `flotilla gate …`. */
export const gateNoun: Noun = {
  name: "gate",
  summary: "list and approve the gates of runs across the fleet",
  verbs: [list, approve],
};

/** A metric gate's last measurement in a table cell: `0.0042 Successful`; `-` for none. */
function lastMeasurement(gate: wire.Gate__Output): string {
  const last = gate.metric?.measurements.at(-1);
  if (last === undefined) return "-";
  const verdict = MEASUREMENT_VERDICT.fromWire(last.verdict) ?? last.verdict;
  if (!last.hasValues) return `${verdict} (no value)`;
  const shown = last.values
    .slice(0, 2)
    .map((v) =>
      Number.isNaN(v)
        ? "NaN"
        : Number.isFinite(v)
          ? String(Number(v.toPrecision(4)))
          : v > 0
            ? "+Inf"
            : "-Inf",
    );
  return `${shown.length === 0 ? "no series" : shown.join(", ")}${last.values.length > 2 ? ", …" : ""} ${verdict}`;
}
