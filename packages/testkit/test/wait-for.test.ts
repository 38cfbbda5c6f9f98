import { describe, expect, test } from "vitest";
import { FlotillaError } from "@flotilla/core";
import { freePort, waitFor } from "@flotilla/testkit";
import { createServer } from "node:net";

describe("waitFor", () => {
  test("resolves with the first truthy value", async () => {
    let calls = 0;
    const value = await waitFor(() => (++calls >= 3 ? { calls } : undefined), {
      intervalMs: 1,
    });
    expect(value).toEqual({ calls: 3 });
  });

  test("treats a throwing predicate as not yet", async () => {
    let calls = 0;
    const value = await waitFor(
      async () => {
        await Promise.resolve();
        if (++calls < 3) throw new Error("not yet");
        return "done";
      },
      { intervalMs: 1 },
    );
    expect(value).toBe("done");
  });

  test("times out with deadline_exceeded, the message and the last error as cause", async () => {
    const last = new Error("still 2 members running");
    const error: unknown = await waitFor(
      () => {
        throw last;
      },
      { timeoutMs: 50, intervalMs: 5, message: "the run to complete" },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FlotillaError);
    expect(error).toMatchObject({ code: "deadline_exceeded", cause: last });
    expect((error as Error).message).toMatch(
      /Timed out after 50 ms .*waiting for the run to complete: last attempt failed: still 2 members running/,
    );
  });

  test("rejects with the signal's reason when aborted", async () => {
    const controller = new AbortController();
    const reason = new Error("stopped");
    const waiting = waitFor(() => false, {
      timeoutMs: 10_000,
      intervalMs: 5,
      signal: controller.signal,
    });
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });
});

describe("freePort", () => {
  test("returns a port that can be bound on 127.0.0.1", async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
    expect(port).toBeGreaterThan(0);
  });
});
