/**
 * `flotilla audit list|watch`: who did what, when, why, and how it went. In these commands
 * `--actor` filters by the actor; your own identity comes from FLOTILLA_ACTOR or the OS user.
 */
import { formatProblems, parseDuration } from "@flotilla/core";
import { ERROR_CODE, type wire } from "@flotilla/protocol";
import { EXIT_OK, EXIT_UNREACHABLE } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
} from "../hub/admin-command.js";
import { printJson, printJsonLine, printLines } from "../hub/output.js";
import { listAll } from "../hub/pages.js";
import { enumName, enumWord } from "../render/enum-word.js";
import type { Style } from "../render/style.js";
import { renderTable, type Column } from "../render/table.js";
import { formatInstant } from "../render/time.js";
import type { OptionSpec, Noun, ParsedArgs } from "./command.js";

const METHOD_PREFIX = "/flotilla.v1.AdminService/";

const OUTCOMES = ["Succeeded", "Denied", "Failed"] as const;

const FILTER_OPTIONS = {
  actor: {
    type: "string",
    valueName: "ACTOR",
    description: 'only events by this actor, e.g. "alice" or "user:alice"',
  },
  method: {
    type: "string",
    valueName: "METHOD",
    description: "only this method, e.g. StartUpdateRun",
  },
  "target-kind": {
    type: "string",
    valueName: "KIND",
    description:
      "only events on this kind: Cluster, ClusterGroup, Bundle, UpdateStrategy, UpdateRun, Release, AutoUpgradeProfile",
  },
  target: {
    type: "string",
    valueName: "NAME",
    description: "only events on the target of this name",
  },
  outcome: {
    type: "string",
    choices: OUTCOMES,
    multiple: true,
    description: "only events with this outcome; repeatable",
  },
} as const satisfies Record<string, OptionSpec>;

/** `StartUpdateRun` → the full method name; a full name passes through. */
function fullMethod(method: string): string {
  if (method.startsWith("/")) return method;
  return METHOD_PREFIX + method.charAt(0).toUpperCase() + method.slice(1);
}

function filterOf(args: ParsedArgs): wire.AuditFilter {
  const set = (
    key: keyof wire.AuditFilter,
    option: string,
    map = (v: string) => v,
  ) => {
    const value = args.string(option);
    return value === undefined ? {} : { [key]: map(value) };
  };
  return {
    ...set("actor", "actor"),
    ...set("method", "method", fullMethod),
    ...set("targetKind", "target-kind"),
    ...set("targetName", "target"),
    outcomes: args
      .strings("outcome")
      .map((o) => enumName(o, "AUDIT_OUTCOME_") as wire.AuditOutcome),
  };
}

function outcomeWord(e: wire.AuditEvent__Output, style: Style): string {
  const word = enumWord(e.outcome, "AUDIT_OUTCOME_");
  const code =
    e.errorCode === undefined ? undefined : ERROR_CODE.fromWire(e.errorCode);
  const text = code === undefined ? word : `${word} (${code})`;
  return word === "Succeeded" ? style.green(text) : style.red(text);
}

const shortMethod = (method: string): string =>
  method.startsWith(METHOD_PREFIX)
    ? method.slice(METHOD_PREFIX.length)
    : method;

const target = (e: wire.AuditEvent__Output): string =>
  e.targetKind === "" ? e.targetName || "-" : `${e.targetKind}/${e.targetName}`;

/** One line for `audit watch`. */
function eventLine(e: wire.AuditEvent__Output, style: Style): string {
  const parts = [
    `#${String(e.sequence)}`,
    formatInstant(e.atMs),
    e.actor === "" ? "(unknown)" : e.actor,
    shortMethod(e.method),
    target(e),
    outcomeWord(e, style),
  ];
  if (e.reason !== "") parts.push(`reason: ${e.reason}`);
  if (e.message !== "") parts.push(e.message);
  return parts.join("  ");
}

const list = adminCommand({
  name: "audit list",
  summary: "list audit events: who did what, when, why and how it went",
  description: "Lists the audit stream's events that match every filter given.",
  options: {
    ...FILTER_OPTIONS,
    since: {
      type: "string",
      valueName: "DURATION",
      description: "only events of the last DURATION, e.g. 1h, 7d",
    },
  },
  ownsActorOption: true,
  prepare: (args, io) => {
    const since = args.string("since");
    if (since === undefined) return prepared(filterOf(args));
    const parsed = parseDuration(since);
    if (!parsed.ok)
      return refused([
        usageMessage(
          "audit list",
          `--since ${formatProblems(parsed.problems)} (got "${since}")`,
        ),
      ]);
    return prepared({
      ...filterOf(args),
      sinceMs: Math.max(0, io.now() - parsed.value),
    });
  },
  run: async (ctx, filter) => {
    const events = await listAll(async (pageToken) => {
      const page = await ctx.hub.call("listAuditEvents", { filter, pageToken });
      return { items: page.events, nextPageToken: page.nextPageToken };
    });
    if (ctx.json) printJson(ctx.io, { events });
    else if (events.length === 0)
      printLines(ctx.io, ["No audit events match."]);
    else {
      const style = ctx.render.style;
      const columns: Column<wire.AuditEvent__Output>[] = [
        { header: "TIME", cell: (e) => formatInstant(e.atMs) },
        {
          header: "ACTOR",
          cell: (e) => (e.actor === "" ? "(unknown)" : e.actor),
        },
        { header: "METHOD", cell: (e) => shortMethod(e.method) },
        { header: "TARGET", cell: target },
        { header: "OUTCOME", cell: (e) => outcomeWord(e, style) },
        { header: "REASON", cell: (e) => e.reason },
      ];
      printLines(ctx.io, renderTable(columns, events, style));
    }
    return EXIT_OK;
  },
});

const watch = adminCommand({
  name: "audit watch",
  summary: "print audit events as they happen, one a line",
  description:
    "Follows the audit stream and prints each matching event on one line (-o json: one JSON object\n" +
    "a line) until interrupted. With --after SEQ, replays the events after that sequence first.",
  options: {
    ...FILTER_OPTIONS,
    after: {
      type: "string",
      valueName: "SEQ",
      description: "replay events after this sequence number first",
    },
  },
  ownsActorOption: true,
  prepare: (args) => {
    const after = args.string("after");
    if (after !== undefined && !/^\d+$/.test(after))
      return refused([
        usageMessage(
          "audit watch",
          `--after must be a sequence number (got "${after}")`,
        ),
      ]);
    return prepared({
      filter: filterOf(args),
      ...(after === undefined ? {} : { afterSequence: Number(after) }),
    });
  },
  run: async (ctx, request) => {
    const events = ctx.hub.stream<wire.WatchAuditEventsResponse__Output>(
      (admin, metadata) => admin.watchAuditEvents(request, metadata),
    );
    for await (const { event } of events) {
      if (event === null) continue;
      if (ctx.json) printJsonLine(ctx.io, event);
      else printLines(ctx.io, [eventLine(event, ctx.render.style)]);
    }
    ctx.io.stderr(
      `flotilla: the hub at ${ctx.hub.address} ended the audit stream\n`,
    );
    return EXIT_UNREACHABLE;
  },
});

/** `flotilla audit …`. */
export const auditNoun: Noun = {
  name: "audit",
  summary: "list and follow the audit stream",
  verbs: [list, watch],
};
