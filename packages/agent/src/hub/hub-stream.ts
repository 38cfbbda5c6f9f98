/**
 * One `AgentService.Connect` call seen from the agent: typed writes that respect backpressure
 * (`write() === false` → wait for `'drain'`), hub messages delivered to one
 * handler, and one `ended` promise that settles when the call is over, with the error it ended
 * with (a FlotillaError with the hub's field problems, or undefined for a clean end).
 */
import { setTimeout as delay } from "node:timers/promises";
import type { FlotillaError } from "@flotilla/core";
import {
  status as grpcStatus,
  type ClientDuplexStream,
  type StatusObject,
} from "@grpc/grpc-js";
import { fromGrpcError, type wire } from "@flotilla/protocol";
import type { Clock } from "@flotilla/node";

/** How a stream ended. */
export interface StreamEnd {
  /** The gRPC status code (0 = OK). */
  readonly code: number;
  /** Undefined when the hub ended the stream cleanly. */
  readonly error?: FlotillaError;
}

/** The agent's side of one Connect call. */
export class HubStream {
  readonly ended: Promise<StreamEnd>;
  readonly #call: ClientDuplexStream<
    wire.AgentMessage,
    wire.HubMessage__Output
  >;
  readonly #welcome: Promise<wire.Welcome__Output>;
  #onWelcome: ((welcome: wire.Welcome__Output) => void) | undefined;
  #done = false;
  #backlogged = false;
  #error: unknown;

  constructor(
    call: ClientDuplexStream<wire.AgentMessage, wire.HubMessage__Output>,
    onMessage: (message: wire.HubMessage__Output) => void,
    onDrain: () => void,
  ) {
    this.#call = call;
    this.#welcome = new Promise((resolve) => {
      this.#onWelcome = resolve;
    });
    call.on("data", (message: wire.HubMessage__Output) => {
      if (this.#done) return;
      if (message.welcome && this.#onWelcome !== undefined) {
        this.#onWelcome(message.welcome);
        this.#onWelcome = undefined;
      } else onMessage(message);
    });
    call.on("drain", () => {
      this.#backlogged = false;
      if (!this.#done) onDrain();
    });
    // grpc-js emits 'error' (status not OK) and then 'status' for every call: the listener keeps
    // an error from crashing the process, and 'status' is where the call is over.
    call.on("error", (error: unknown) => {
      this.#error = error;
    });
    this.ended = new Promise<StreamEnd>((resolve) => {
      call.on("status", (status: StatusObject) => {
        this.#done = true;
        resolve(
          status.code === grpcStatus.OK
            ? { code: status.code }
            : {
                code: status.code,
                error: fromGrpcError(this.#error ?? status),
              },
        );
      });
    });
  }

  /**
   * The hub's welcome (the first one; later ones go to `onMessage`), or why there is none: the
   * call ended, or `timeoutMs` passed on `clock` (the call is then cancelled).
   */
  async awaitWelcome(
    clock: Clock,
    timeoutMs: number,
  ): Promise<wire.Welcome__Output | "ended" | "timeout"> {
    const timer = new AbortController();
    const outcome = await Promise.race([
      this.#welcome,
      this.ended.then(() => "ended" as const),
      clock
        .sleep(timeoutMs, { signal: timer.signal })
        .then(() => "timeout" as const)
        .catch(() => "ended" as const),
    ]);
    timer.abort();
    if (outcome === "timeout") this.cancel();
    return outcome;
  }

  /** Whether the call is over (nothing can be written any more). */
  get done(): boolean {
    return this.#done;
  }

  /** Whether a write now would only add to a backlog: wait for the drain callback instead. */
  get backlogged(): boolean {
    return this.#backlogged;
  }

  /** Writes one message; false when the call is over and nothing was written. */
  write(message: wire.AgentMessage): boolean {
    if (this.#done) return false;
    if (!this.#call.write(message)) this.#backlogged = true;
    return true;
  }

  /**
   * Half-closes the call and waits up to `timeoutMs` (real time: shutting down must not depend on
   * an injected clock) for the hub to end it, then cancels it.
   */
  async close(timeoutMs: number): Promise<void> {
    if (this.#done) return;
    this.#call.end();
    const timeout = new AbortController();
    await Promise.race([
      this.ended,
      delay(timeoutMs, undefined, { signal: timeout.signal, ref: false }).catch(
        () => undefined,
      ),
    ]);
    timeout.abort();
    this.cancel();
  }

  /** Ends the call at once (CANCELLED). */
  cancel(): void {
    if (!this.#done) this.#call.cancel();
  }
}
