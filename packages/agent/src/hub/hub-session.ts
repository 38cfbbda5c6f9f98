/**
 * The agent's session with the hub (docs/agent-protocol.md): one `AgentService.Connect` stream at a
 * time, opened with hello then facts, kept alive with heartbeats at the interval the hub's welcome
 * names, carrying status reports (numbered per stream, acked by the hub), and re-opened after any
 * end with jittered exponential backoff. Given several hub addresses (the replicas of one hub), it
 * connects to one at a time and moves to the next after every end (hub-rotation.ts): the statuses
 * not acked by the hub it left go to the next one. After every welcome, and whenever the hub sends
 * resync, the session lets its owner bring the intent up to date (`onSync`) and then sends the
 * current status of every item again (see status-outbox.ts for the retransmission rule).
 *
 * Time and randomness are injected (a `Clock`, `random`), so heartbeats and backoff are
 * tested without sleeping.
 */
import {
  FlotillaError,
  showValue,
  type Maintenance,
  compact,
} from "@flotilla/core";
import {
  clusterFactsToWire,
  createAgentServiceClient,
  maintenanceToWire,
  PROTOCOL_VERSION,
  statusReportToWire,
  streamErrorFromWire,
  type ClusterFacts,
  type StatusSubject,
  type wire,
} from "@flotilla/protocol";
import type { Logger } from "pino";
import { noopMetrics, type AgentMetrics } from "../metrics/agent-metrics.js";
import { createBackoff } from "@flotilla/node";
import { sendHeartbeats } from "./heartbeats.js";
import { createHubRotation, type HubRotation } from "./hub-rotation.js";
import { HubStream, type StreamEnd } from "./hub-stream.js";
import {
  HUB_CHANNEL_DEFAULTS,
  type HubSession,
  type HubSessionDeps,
  type HubSessionOptions,
  type SessionStats,
} from "./session-api.js";
import type {
  SessionEvent,
  SessionState,
  SyncReason,
} from "./session-events.js";
import {
  StatusOutbox,
  subjectKey,
  type StatusReportInput,
} from "./status-outbox.js";
import { hubCredentials } from "./transport.js";

export { HUB_CHANNEL_DEFAULTS };
export type { HubSession, HubSessionDeps, HubSessionOptions, SessionStats };

/** Used when a welcome names no interval (0); the hub's own default. */
const DEFAULT_HEARTBEAT_INTERVAL_MS = 10_000;

/** Creates a session; nothing happens until `start()`. */
export function createHubSession(
  deps: HubSessionDeps,
  options: HubSessionOptions,
): HubSession {
  return new Session(deps, options);
}

/** One open stream and what belongs to it. */
interface Live {
  readonly id: number;
  /** The hub address the stream goes to. */
  readonly address: string;
  readonly stream: HubStream;
  /** Aborts when the stream ends: heartbeats and syncs of this stream stop. */
  readonly ended: AbortController;
  welcomed: boolean;
  sequence: number;
  refusal?: FlotillaError;
}

class Session implements HubSession {
  readonly clusterName: string;
  readonly #deps: HubSessionDeps;
  readonly #options: HubSessionOptions;
  readonly #log: Logger;
  readonly #metrics: AgentMetrics;
  readonly #lifetime = new AbortController();
  readonly #outbox = new StatusOutbox();
  readonly #backoff;
  readonly #rotation: HubRotation;
  #state: SessionState = "idle";
  #client: wire.AgentServiceClient | undefined;
  /** The address `#client`'s channel goes to. */
  #clientAddress = "";
  /** Set by `reconnect()`: the next connect makes a new channel, without a backoff pause. */
  #renewChannel = false;
  /** Aborted by `reconnect()` to cut a backoff pause short. */
  #wake = new AbortController();
  #loop: Promise<void> | undefined;
  #live: Live | undefined;
  #streamIds = 0;
  #unreachableLogged = false;
  #stats = { connects: 0, heartbeatsSent: 0, reportsSent: 0, acksReceived: 0 };

  constructor(deps: HubSessionDeps, options: HubSessionOptions) {
    this.clusterName = options.clusterName;
    this.#deps = deps;
    this.#options = options;
    this.#log = deps.logger;
    this.#metrics = deps.metrics ?? noopMetrics;
    this.#backoff = createBackoff({
      ...options.backoff,
      ...compact({ random: deps.random }),
    });
    this.#rotation = createHubRotation(options.hub, deps.random ?? Math.random);
  }

  get state(): SessionState {
    return this.#state;
  }

  get connectedAddress(): string | undefined {
    return this.#live?.welcomed === true ? this.#live.address : undefined;
  }

  start(): void {
    if (this.#state !== "idle") return;
    this.#client = this.#createClient();
    this.#loop = this.#run().catch((error: unknown) => {
      this.#log.error(
        { err: FlotillaError.from(error) },
        "Hub session stopped unexpectedly",
      );
    });
  }

  async stop(): Promise<void> {
    if (this.#state === "stopped") return;
    this.#state = "stopped";
    this.#lifetime.abort(
      new FlotillaError(
        "unavailable",
        `The hub session of cluster ${showValue(this.clusterName)} stopped`,
      ),
    );
    await this.#live?.stream.close(this.#options.closeTimeoutMs ?? 2_000);
    await this.#loop;
    this.#client?.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  report(report: StatusReportInput): void {
    if (this.#state === "stopped") return;
    if (this.#outbox.set(report)) this.#flush();
  }

  retain(subjects: Iterable<StatusSubject>): void {
    this.#outbox.retain(new Set([...subjects].map(subjectKey)));
  }

  currentStatuses(): StatusReportInput[] {
    return this.#outbox.current();
  }

  factsChanged(): void {
    const live = this.#live;
    if (live === undefined) return;
    void this.#options.facts({ signal: live.ended.signal }).then(
      (facts) => {
        live.stream.write({ facts: clusterFactsToWire(facts) });
      },
      (error: unknown) => {
        if (!live.ended.signal.aborted)
          this.#log.warn(
            { err: FlotillaError.from(error) },
            "Cannot read the cluster's facts to send them",
          );
      },
    );
  }

  windowsChanged(maintenance: Maintenance | undefined): void {
    this.#live?.stream.write({
      // No maintenance (null) means no constraints.
      windowsChanged: {
        maintenance:
          maintenance === undefined ? null : maintenanceToWire(maintenance),
      },
    });
  }

  stats(): SessionStats {
    return { ...this.#stats };
  }

  reconnect(reason: string): void {
    if (this.#state === "idle" || this.#state === "stopped") return;
    this.#renewChannel = true;
    this.#event({ reason }, "Reconnecting to the hub");
    this.#wake.abort();
    const live = this.#live;
    if (live !== undefined)
      void live.stream.close(this.#options.closeTimeoutMs ?? 2_000);
  }

  #createClient(): wire.AgentServiceClient {
    this.#clientAddress = this.#rotation.current;
    return createAgentServiceClient(
      this.#clientAddress,
      hubCredentials(this.#options.transport),
      { ...HUB_CHANNEL_DEFAULTS, ...this.#options.channelOptions },
    );
  }

  #setState(state: SessionState): void {
    if (this.#state !== "stopped") this.#state = state;
  }

  #emit(event: SessionEvent): void {
    try {
      this.#options.onEvent?.(event);
    } catch (error) {
      this.#log.error(
        { err: FlotillaError.from(error) },
        "A session event handler threw",
      );
    }
  }

  #event(fields: object, message: string): void {
    this.#log[this.#options.eventLevel ?? "info"](fields, message);
  }

  /** Connects, and after every end waits out the backoff and connects again, until stopped. */
  async #run(): Promise<void> {
    const signal = this.#lifetime.signal;
    for (let attempt = 1; !signal.aborted; attempt++) {
      if (attempt > 1) this.#metrics.reconnect();
      const streamsBefore = this.#streamIds;
      const welcomed = await this.#connectOnce(attempt);
      if (signal.aborted) return;
      if (welcomed) this.#backoff.reset();
      if (this.#renewChannel) continue;
      // No stream opened (the facts could not be read): nothing says this address is at fault.
      if (this.#streamIds !== streamsBefore) this.#failOver(welcomed);
      const delayMs = this.#backoff.next();
      this.#setState("waiting");
      this.#emit({
        type: "RetryScheduled",
        delayMs,
        failures: this.#backoff.attempts,
      });
      this.#log.debug({ delayMs }, "Reconnecting to the hub after a pause");
      this.#wake = new AbortController();
      try {
        await this.#deps.clock.sleep(delayMs, {
          signal: AbortSignal.any([signal, this.#wake.signal]),
        });
      } catch {
        if (signal.aborted) return; // stopped; else reconnect() cut the pause short
      }
    }
  }

  /** After a stream ended (not by `reconnect()`): the next attempt goes to the next address. */
  #failOver(welcomed: boolean): void {
    const from = this.#rotation.current;
    if (!this.#rotation.advance()) return;
    const to = this.#rotation.current;
    this.#metrics.hubFailover();
    this.#emit({ type: "FailedOver", from, to });
    // Once per outage, like "Cannot reach the hub"; every later move of it is debug.
    if (welcomed) this.#event({ from, to }, "Moving to the hub's next address");
    else this.#log.debug({ from, to }, "Moving to the hub's next address");
  }

  /** One stream from hello to its end; true when the hub welcomed it. */
  async #connectOnce(attempt: number): Promise<boolean> {
    const signal = this.#lifetime.signal;
    if (this.#client === undefined) return false;
    this.#setState("connecting");
    this.#emit({
      type: "ConnectStarted",
      attempt,
      address: this.#rotation.current,
    });
    let facts: ClusterFacts;
    try {
      facts = await this.#options.facts({ signal });
    } catch (error) {
      if (!signal.aborted)
        this.#log.warn(
          { err: FlotillaError.from(error) },
          "Cannot read the cluster's facts; not connecting this time",
        );
      return false;
    }
    if (signal.aborted) return false;
    if (this.#renewChannel || this.#clientAddress !== this.#rotation.current) {
      // The previous stream has ended: its channel can go; the new one reads new credentials, or
      // goes to the hub's next address.
      this.#renewChannel = false;
      this.#client.close();
      this.#client = this.#createClient();
    }

    const live = this.#open(this.#client, this.#clientAddress);
    live.stream.write({
      hello: {
        clusterName: this.clusterName,
        agentVersion: this.#options.agentVersion,
        protocolVersion: PROTOCOL_VERSION,
        lastAppliedGeneration: this.#options.lastAppliedGeneration(),
      },
    });
    live.stream.write({ facts: clusterFactsToWire(facts) });

    const timeoutMs = this.#options.welcomeTimeoutMs ?? 30_000;
    const welcome = await live.stream.awaitWelcome(this.#deps.clock, timeoutMs);
    if (welcome === "timeout")
      this.#log.warn(
        { timeoutMs },
        "The hub did not answer hello in time; reconnecting",
      );
    else if (welcome !== "ended") this.#welcomed(live, welcome);
    const end = await live.stream.ended;
    this.#closed(live, end);
    return live.welcomed;
  }

  #open(client: wire.AgentServiceClient, address: string): Live {
    const id = ++this.#streamIds;
    const call = client.connect();
    const live: Live = {
      id,
      address,
      stream: new HubStream(
        call,
        (message) => {
          this.#onMessage(live, message);
        },
        () => {
          this.#flush();
        },
      ),
      ended: new AbortController(),
      welcomed: false,
      sequence: 0,
    };
    this.#live = live;
    this.#stats.connects++;
    return live;
  }

  #welcomed(live: Live, welcome: wire.Welcome__Output): void {
    live.welcomed = true;
    this.#setState("connected");
    this.#metrics.sessionConnected();
    const heartbeatIntervalMs =
      welcome.heartbeatIntervalMs > 0
        ? welcome.heartbeatIntervalMs
        : DEFAULT_HEARTBEAT_INTERVAL_MS;
    // Started first, so its first sleep is scheduled by the time anyone sees "connected".
    void sendHeartbeats(live.stream, {
      clock: this.#deps.clock,
      intervalMs: heartbeatIntervalMs,
      signal: live.ended.signal,
      lastAppliedGeneration: this.#options.lastAppliedGeneration,
      onSent: (sentAtMs, lagMs) => {
        this.#stats.heartbeatsSent++;
        this.#metrics.heartbeatSent();
        this.#metrics.heartbeatLag(lagMs);
        this.#emit({ type: "HeartbeatSent", sentAtMs });
      },
    });
    this.#event(
      {
        address: live.address,
        heartbeatIntervalMs,
        skewMs: welcome.hubTimeMs - this.#deps.clock.now(),
      },
      "Connected to the hub",
    );
    this.#emit({
      type: "Welcomed",
      streamId: live.id,
      address: live.address,
      heartbeatIntervalMs,
      hubTimeMs: welcome.hubTimeMs,
    });
    void this.#sync(live, "connected");
  }

  #closed(live: Live, end: StreamEnd): void {
    live.ended.abort();
    if (this.#live === live) this.#live = undefined;
    if (live.welcomed) this.#metrics.sessionDisconnected();
    const unackedCurrent = this.#outbox.streamEnded();
    const error = live.refusal ?? end.error;
    const fields = {
      address: live.address,
      welcomed: live.welcomed,
      unackedCurrent,
      ...compact({ err: error }),
    };
    if (this.#lifetime.signal.aborted) {
      // stopping: the end was asked for
    } else if (live.welcomed) {
      this.#unreachableLogged = false;
      this.#event(fields, "Disconnected from the hub");
    } else if (!this.#unreachableLogged) {
      // Once per outage; every later failed attempt of it is debug.
      this.#unreachableLogged = true;
      this.#event(fields, "Cannot reach the hub; retrying with backoff");
    } else this.#log.debug(fields, "Cannot reach the hub");
    this.#emit({
      type: "Disconnected",
      streamId: live.id,
      welcomed: live.welcomed,
      unackedCurrent,
      ...compact({ error }),
    });
  }

  #onMessage(live: Live, message: wire.HubMessage__Output): void {
    switch (message.body) {
      case "welcome":
        return; // the stream took the first; another changes nothing
      case "ack":
        if (message.ack) this.#onAck(message.ack);
        return;
      case "resync": {
        const reason = message.resync?.reason ?? "";
        this.#event({ reason }, "The hub asked for a resync");
        this.#emit({ type: "ResyncRequested", reason });
        if (live.welcomed) void this.#sync(live, "resync");
        return;
      }
      case "error": {
        if (!message.error) return;
        const error = streamErrorFromWire(message.error);
        live.refusal = error;
        this.#metrics.hubError(error.code);
        this.#log.warn({ err: error }, "The hub refused the session");
        this.#emit({ type: "HubRefused", error });
        return;
      }
      case undefined:
        return;
      default: {
        const unknown: never = message.body;
        this.#log.debug({ body: unknown }, "Ignoring an unknown hub message");
      }
    }
  }

  #onAck(ack: wire.Ack__Output): void {
    this.#stats.acksReceived++;
    this.#metrics.reportAcked(ack.accepted);
    const result = this.#outbox.acked(ack.sequence, ack.accepted);
    if (!ack.accepted)
      this.#log.debug(
        {
          sequence: ack.sequence,
          generation: ack.generation,
          reason: ack.reason,
        },
        "The hub did not count a report",
      );
    this.#emit({
      type: "ReportAcked",
      sequence: ack.sequence,
      accepted: ack.accepted,
      reason: ack.reason,
      current: result?.current ?? false,
    });
  }

  async #sync(live: Live, reason: SyncReason): Promise<void> {
    const signal = live.ended.signal;
    try {
      await this.#options.onSync?.(reason, { signal });
    } catch (error) {
      if (!signal.aborted)
        this.#log.warn(
          { err: FlotillaError.from(error), reason },
          "Cannot bring the intent up to date; sending the statuses known",
        );
    }
    if (signal.aborted || this.#live !== live) return;
    this.#outbox.queueAll(live.id, reason === "resync");
    this.#flush();
  }

  /** Writes queued statuses until none is left or the stream needs to drain. */
  #flush(): void {
    const live = this.#live;
    if (live === undefined || !live.welcomed) return;
    while (!live.stream.done && !live.stream.backlogged) {
      const next = this.#outbox.take();
      if (next === undefined) return;
      const sequence = ++live.sequence;
      live.stream.write({
        status: statusReportToWire({ ...next.report, sequence }),
      });
      this.#outbox.sent(next.key, sequence, live.id);
      this.#stats.reportsSent++;
      this.#metrics.reportSent(next.report.phase);
      this.#emit({ type: "ReportSent", sequence, report: next.report });
    }
  }
}
