import { FlotillaError } from "@flotilla/core";
import {
  bucketPrefixProblem,
  checkBucketPrefix,
  checkMaxPayload,
  createConnectionWatch,
} from "@flotilla/node";
import type { NatsConnection, Status } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";

/** A connection that only tells its max_payload, whether it is closed, and status events. */
function fakeConnection(maxPayload?: number): {
  nc: NatsConnection;
  emit: (type: Status["type"]) => Promise<void>;
  close: () => void;
} {
  let closed = false;
  const listeners = new Set<(status: Status) => void>();
  const status = (): AsyncIterable<Status> & { stop(): void } => {
    const queue: Status[] = [];
    let wake: (() => void) | undefined;
    let stopped = false;
    const listener = (s: Status): void => {
      queue.push(s);
      wake?.();
    };
    listeners.add(listener);
    return {
      stop() {
        stopped = true;
        listeners.delete(listener);
        wake?.();
      },
      async *[Symbol.asyncIterator]() {
        while (!stopped) {
          const next = queue.shift();
          if (next !== undefined) yield next;
          else await new Promise<void>((resolve) => (wake = resolve));
        }
      },
    };
  };
  const nc = {
    info: maxPayload === undefined ? undefined : { max_payload: maxPayload },
    isClosed: () => closed,
    status,
  } as unknown as NatsConnection;
  return {
    nc,
    emit: async (type) => {
      for (const l of listeners) l({ type } as Status);
      await new Promise((resolve) => setTimeout(resolve, 0));
    },
    close: () => {
      closed = true;
    },
  };
}

describe("the connection watch", () => {
  it("is up until a disconnect, down until the reconnect, and down once closed", async () => {
    const { nc, emit, close } = fakeConnection();
    const watch = createConnectionWatch(nc);
    watch.start();
    expect(watch.up).toBe(true);
    expect(() => {
      watch.check("Cannot get");
    }).not.toThrow();
    await emit("disconnect");
    expect(watch.up).toBe(false);
    expect(() => {
      watch.check("Cannot get");
    }).toThrow(
      new FlotillaError(
        "unavailable",
        "Cannot get: the NATS connection is down",
      ),
    );
    await emit("reconnect");
    expect(watch.up).toBe(true);
    close();
    expect(watch.up).toBe(false);
    watch.stop();
  });

  it("ignores status events after stop and counts as up again on a new start", async () => {
    const { nc, emit } = fakeConnection();
    const watch = createConnectionWatch(nc);
    watch.start();
    await emit("disconnect");
    expect(watch.up).toBe(false);
    watch.start();
    expect(watch.up).toBe(true);
    watch.stop();
    await emit("disconnect");
    expect(watch.up).toBe(true);
  });
});

describe("the connection watch's listener", () => {
  it("hears every status after up has taken it in, and nothing after stop", async () => {
    const { nc, emit } = fakeConnection();
    const heard: string[] = [];
    const watch = createConnectionWatch(nc, (status) => {
      heard.push(`${status.type}:${String(watch.up)}`);
    });
    watch.start();
    await emit("disconnect");
    await emit("reconnect");
    watch.stop();
    await emit("disconnect");
    expect(heard).toEqual(["disconnect:false", "reconnect:true"]);
  });
});

describe("bucket prefixes", () => {
  it("allow 1 to 64 characters of A-Z, a-z, 0-9, - and _", () => {
    expect(bucketPrefixProblem("flotilla")).toBeUndefined();
    expect(bucketPrefixProblem("a-b_C9")).toBeUndefined();
    expect(bucketPrefixProblem("x".repeat(64))).toBeUndefined();
    for (const bad of ["", "x".repeat(65), "a.b", "a b", "a*", "a>"]) {
      expect(bucketPrefixProblem(bad)).toBe(
        "must be 1 to 64 characters of A-Z, a-z, 0-9, - and _",
      );
    }
  });

  it("are checked with the caller's words", () => {
    expect(() => {
      checkBucketPrefix("a.b", "Cannot create the store", "bucketPrefix");
    }).toThrow(
      new FlotillaError(
        "invalid_argument",
        'Cannot create the store: bucketPrefix "a.b" must be 1 to 64 characters of A-Z, a-z, 0-9, - and _',
      ),
    );
    expect(() => {
      checkBucketPrefix("ok", "Cannot create the store", "bucketPrefix");
    }).not.toThrow();
  });
});

describe("checkMaxPayload", () => {
  it("refuses a server whose max_payload is below what the adapter may send", () => {
    const { nc } = fakeConnection(1_000);
    expect(() => {
      checkMaxPayload(
        nc,
        1_001,
        "Cannot start",
        "the 1001 bytes a value may take",
      );
    }).toThrow(
      new FlotillaError(
        "failed_precondition",
        "Cannot start: the server's max_payload (1000 bytes) is less than the 1001 bytes a value may take",
      ),
    );
    expect(() => {
      checkMaxPayload(nc, 1_000, "Cannot start", "enough");
    }).not.toThrow();
  });

  it("passes a connection that has not told its max_payload", () => {
    expect(() => {
      checkMaxPayload(fakeConnection().nc, 1e9, "Cannot start", "enough");
    }).not.toThrow();
  });
});
