/**
 * How hub replicas hand each other work on runs, over core NATS (docs/high-availability.md):
 *
 * - `<prefix>.hub.run.command.<run>`: commands (start, stop, skip, approve...) a replica received
 *   for a run it does not own. Only the owner subscribes, from the moment it takes the run until
 *   it loses it, so "no responders" means "no owner right now" and the sender retries until an
 *   owner appears or its deadline passes; a command is never sent twice to a live owner. The
 *   owner answers with the revision the commands were stored at (or the error). A deletion
 *   (`flotilla run delete`) goes the same way, as `{delete: true}`, answered with revision 0.
 * - `<prefix>.hub.run.report.<run>`: agents' counted reports on the run's members, from the replica
 *   holding the agent's stream; only the owner subscribes.
 * - `<prefix>.hub.run.replay`: a new owner asks every replica to send the latest reports of the
 *   run's members again, since reports sent while nobody owned the run were dropped.
 * - `<prefix>.hub.bundles.report`: every bundle report an agent sends, shared with every replica
 *   (each keeps the latest per cluster, so `bundle get` answers the same anywhere; the owner of the
 *   bundle rollouts runs its passes on them). `<prefix>.hub.bundles.replay`: a new owner asks for
 *   them all again.
 *
 * Why core NATS subjects and not a stream: a report only matters to the run's current owner, and
 * a new owner gets the latest reports again by asking; a stream would add a replicated disk write
 * per report, which at 10,000 clusters costs more than the rest of the report's path.
 */
import {
  FLOTILLA_ERROR_CODES,
  FlotillaError,
  showValue,
  type FlotillaErrorCode,
} from "@flotilla/core";
import type { StatusReport } from "@flotilla/protocol";
import type { Clock } from "@flotilla/node";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { z } from "zod";
import type { RunCommand } from "../runs/run-events.js";
import type { RunReplication } from "../runs/run-manager.js";
import { encodeKeyToken } from "../store/keys.js";

export interface RunForwardingDeps {
  readonly nc: NatsConnection;
  /** Subjects start with this (the state prefix); default `flotilla`. */
  readonly prefix?: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** This replica's id: what it shares is not handed back to it. */
  readonly replica: string;
  /** How long a forwarded command may wait for an owner to appear; default 20 s. */
  readonly ownerWaitMs?: number;
  /** How long the owner may take to answer a command; default 15 s. */
  readonly answerTimeoutMs?: number;
  /** A report sent on to an owner, or a command the owner answered (metrics). */
  readonly onForwarded?: (kind: "report" | "command") => void;
}

/** What a replica does with what the others send it. */
export interface RunForwardingHandlers {
  /** Commands for a run this replica owns: resolves with the revision they were stored at. */
  command(run: string, commands: readonly RunCommand[]): Promise<number>;
  /** Deletes a run this replica owns. */
  delete(run: string): Promise<unknown>;
  /** A report for a run this replica owns. */
  report(cluster: string, run: string, report: StatusReport): void;
  /** Send again the latest reports of `run`'s members this replica holds. */
  replay(run: string): void;
  /** A bundle report another replica received from its agent. */
  bundleReport(cluster: string, report: StatusReport): void;
  /** Send again the latest bundle reports this replica holds. */
  bundleReplay(): void;
}

export interface RunForwarding extends Omit<RunReplication, "created"> {
  /** Asks every replica to send the latest reports of the run's members again. */
  requestReplay(run: string): void;
  /** Starts answering the subjects every replica listens on (replay requests). */
  start(handlers: RunForwardingHandlers): void;
  /** This replica owns `run` now: it answers its commands and reports. */
  serveRun(run: string): void;
  /** This replica no longer owns `run`. */
  unserveRun(run: string): void;
  /**
   * Shares a bundle report of an agent connected here with every other replica: all keep every
   * cluster's latest bundle reports (for `bundle get` on any replica), the owner of the bundle
   * rollouts runs its passes on them.
   */
  forwardBundleReport(cluster: string, report: StatusReport): void;
  /** Asks every replica to send its latest bundle reports again. */
  requestBundleReplay(): void;
  /** Reports forwarded to an owner since start (metrics). */
  readonly forwarded: { reports: number; commands: number };
  stop(): void;
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

const commandMessage = z.union([
  z.object({
    commands: z.array(z.looseObject({ type: z.string() })).min(1),
  }),
  z.object({ delete: z.literal(true) }),
]);
const answerMessage = z.union([
  z.object({ revision: z.number().int().nonnegative() }),
  z.object({ error: z.object({ code: z.string(), message: z.string() }) }),
]);
const reportMessage = z.object({
  cluster: z.string().min(1),
  report: z.looseObject({ phase: z.string() }),
});
const replayMessage = z.object({ run: z.string().min(1) });
/** Bundle reports are shared in batches: those received in one turn of the event loop. */
const BUNDLE_BATCH_MAX = 64;
const senderOf = z.looseObject({ replica: z.string() });
const bundleReportBatch = z.object({
  replica: z.string(),
  reports: z.array(reportMessage).max(BUNDLE_BATCH_MAX),
});

export function createRunForwarding(deps: RunForwardingDeps): RunForwarding {
  const prefix = deps.prefix ?? "flotilla";
  const log = deps.logger;
  const subject = (kind: "command" | "report", run: string): string =>
    `${prefix}.hub.run.${kind}.${encodeKeyToken(run)}`;
  const replaySubject = `${prefix}.hub.run.replay`;
  const bundleReportSubject = `${prefix}.hub.bundles.report`;
  const bundleReplaySubject = `${prefix}.hub.bundles.replay`;
  const served = new Map<string, Subscription[]>();
  const subscriptions: Subscription[] = [];
  let handlers: RunForwardingHandlers | undefined;
  const forwarded = { reports: 0, commands: 0 };
  let pendingBundleReports: { cluster: string; report: StatusReport }[] = [];
  const flushBundleReports = (): void => {
    if (pendingBundleReports.length === 0 || deps.nc.isClosed()) {
      pendingBundleReports = [];
      return;
    }
    const reports = pendingBundleReports;
    pendingBundleReports = [];
    deps.nc.publish(
      bundleReportSubject,
      utf8.encode(JSON.stringify({ replica: deps.replica, reports })),
    );
  };

  const parse = <T>(schema: z.ZodType<T>, data: Uint8Array): T | undefined => {
    try {
      const parsed = schema.safeParse(JSON.parse(fromUtf8.decode(data)));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  };

  const listen = (
    name: string,
    onMessage: (data: Uint8Array, respond: (body: unknown) => void) => void,
  ): Subscription => {
    const sub = deps.nc.subscribe(name, {
      callback: (error, msg) => {
        if (error !== null) {
          log.warn(
            { subject: name, err: error },
            "forwarding subscription failed",
          );
          return;
        }
        onMessage(msg.data, (body) => {
          msg.respond(utf8.encode(JSON.stringify(body)));
        });
      },
    });
    return sub;
  };

  return {
    forwarded,

    start(next) {
      handlers = next;
      subscriptions.push(
        listen(replaySubject, (data) => {
          const message = parse(replayMessage, data);
          if (message !== undefined) handlers?.replay(message.run);
        }),
        listen(bundleReplaySubject, () => {
          handlers?.bundleReplay();
        }),
        listen(bundleReportSubject, (data) => {
          // Our own batches come back too: recognised by the sender alone, before the reports.
          if (parse(senderOf, data)?.replica === deps.replica) return;
          const message = parse(bundleReportBatch, data);
          if (message === undefined) {
            log.warn("malformed shared bundle reports dropped");
            return;
          }
          for (const { cluster, report } of message.reports) {
            handlers?.bundleReport(cluster, report as unknown as StatusReport);
          }
        }),
      );
    },

    serveRun(run) {
      if (served.has(run)) return;
      const commands = listen(subject("command", run), (data, respond) => {
        const message = parse(commandMessage, data);
        if (message === undefined || handlers === undefined) {
          respond({
            error: {
              code: "invalid_argument",
              message: "malformed forwarded command",
            },
          });
          return;
        }
        const applied =
          "delete" in message
            ? handlers.delete(run).then(() => 0)
            : handlers.command(
                run,
                message.commands as unknown as RunCommand[],
              );
        applied.then(
          (revision) => {
            respond({ revision });
          },
          (error: unknown) => {
            respond({
              error: {
                code: error instanceof FlotillaError ? error.code : "internal",
                message: error instanceof Error ? error.message : String(error),
              },
            });
          },
        );
      });
      const reports = listen(subject("report", run), (data) => {
        const message = parse(reportMessage, data);
        if (message === undefined) {
          log.warn({ run }, "malformed forwarded report dropped");
          return;
        }
        handlers?.report(
          message.cluster,
          run,
          message.report as unknown as StatusReport,
        );
      });
      served.set(run, [commands, reports]);
    },

    unserveRun(run) {
      for (const sub of served.get(run) ?? []) sub.unsubscribe();
      served.delete(run);
    },

    forwardBundleReport(cluster, report) {
      forwarded.reports += 1;
      deps.onForwarded?.("report");
      // One NATS message per batch, not per report: each publish costs a socket write, which at
      // thousands of reports a second is most of the hub's work (docs/benchmarks.md).
      pendingBundleReports.push({ cluster, report });
      if (pendingBundleReports.length >= BUNDLE_BATCH_MAX) flushBundleReports();
      else if (pendingBundleReports.length === 1)
        setImmediate(flushBundleReports);
    },

    requestBundleReplay() {
      deps.nc.publish(bundleReplaySubject, utf8.encode("{}"));
    },

    forwardCommand: (run, commands) => ask(run, { commands }),

    async forwardDelete(run) {
      await ask(run, { delete: true });
    },

    forwardReport(cluster, run, report) {
      forwarded.reports += 1;
      deps.onForwarded?.("report");
      deps.nc.publish(
        subject("report", run),
        utf8.encode(JSON.stringify({ cluster, report })),
      );
    },

    requestReplay(run) {
      deps.nc.publish(replaySubject, utf8.encode(JSON.stringify({ run })));
    },

    stop() {
      flushBundleReports();
      for (const run of [...served.keys()]) this.unserveRun(run);
      for (const sub of subscriptions.splice(0)) sub.unsubscribe();
      handlers = undefined;
    },
  };

  /**
   * Sends a command message to the run's owner, waiting for one to appear; resolves with the
   * revision the owner answered.
   */
  async function ask(run: string, message: unknown): Promise<number> {
    const deadline = deps.clock.now() + (deps.ownerWaitMs ?? 20_000);
    const body = utf8.encode(JSON.stringify(message));
    for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
      try {
        const reply = await deps.nc.request(subject("command", run), body, {
          timeout: deps.answerTimeoutMs ?? 15_000,
        });
        forwarded.commands += 1;
        deps.onForwarded?.("command");
        const answer = parse(answerMessage, reply.data);
        if (answer === undefined) {
          throw new FlotillaError(
            "internal",
            `The owner of update run ${showValue(run)} answered with something that is not an answer`,
          );
        }
        if ("revision" in answer) return answer.revision;
        const code = isFlotillaErrorCode(answer.error.code)
          ? answer.error.code
          : "internal";
        throw new FlotillaError(code, answer.error.message);
      } catch (error) {
        if (error instanceof FlotillaError) throw error;
        if (!isNoResponders(error) || deps.clock.now() >= deadline) {
          throw new FlotillaError(
            "unavailable",
            isNoResponders(error)
              ? `Update run ${showValue(run)} has no owner right now (a hub replica is taking it over); retry`
              : `The owner of update run ${showValue(run)} did not answer: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
        await deps.clock.sleep(wait);
      }
    }
  }
}

/** The NATS request found no subscriber (NATS 2.2+ answers "503 no responders" at once). */
function isNoResponders(error: unknown): boolean {
  const text = String(
    (error as { message?: unknown } | null)?.message ?? error,
  );
  const code = (error as { code?: unknown } | null)?.code;
  return code === "503" || /no responders/i.test(text);
}

function isFlotillaErrorCode(code: string): code is FlotillaErrorCode {
  return (FLOTILLA_ERROR_CODES as readonly string[]).includes(code);
}
