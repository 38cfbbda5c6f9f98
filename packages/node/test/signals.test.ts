import { abortable, unlessAborted } from "@flotilla/node";
import { describe, expect, it, vi } from "vitest";

const never = (): Promise<never> => new Promise<never>(() => undefined);

describe("abortable", () => {
  it("settles like the promise when no signal is given", async () => {
    await expect(abortable(Promise.resolve(1), undefined)).resolves.toBe(1);
    await expect(
      abortable(Promise.reject(new Error("boom")), undefined),
    ).rejects.toThrow("boom");
  });

  it("settles like the promise while the signal has not aborted", async () => {
    const controller = new AbortController();
    await expect(
      abortable(Promise.resolve("done"), controller.signal),
    ).resolves.toBe("done");
  });

  it("rejects with the signal's reason when it aborts first", async () => {
    const controller = new AbortController();
    const reason = new Error("gave up");
    const waiting = abortable(never(), controller.signal);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });

  it("rejects at once with the reason of a signal that has already aborted", async () => {
    const reason = new Error("too late");
    await expect(
      abortable(Promise.resolve(1), AbortSignal.abort(reason)),
    ).rejects.toBe(reason);
  });

  it("stops listening to the signal once settled", async () => {
    const controller = new AbortController();
    const remove = vi.spyOn(controller.signal, "removeEventListener");
    await abortable(Promise.resolve(1), controller.signal);
    expect(remove).toHaveBeenCalledWith("abort", expect.any(Function));
  });
});

describe("unlessAborted", () => {
  it("resolves with the promise's value while the signal has not aborted", async () => {
    const controller = new AbortController();
    await expect(
      unlessAborted(Promise.resolve(7), controller.signal),
    ).resolves.toBe(7);
  });

  it("resolves with undefined once the signal aborts first", async () => {
    const controller = new AbortController();
    const waiting = unlessAborted(never(), controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
  });

  it("resolves with undefined at once for a signal that has already aborted", async () => {
    await expect(
      unlessAborted(Promise.resolve(7), AbortSignal.abort()),
    ).resolves.toBeUndefined();
  });

  it("rejects like the promise", async () => {
    const controller = new AbortController();
    await expect(
      unlessAborted(Promise.reject(new Error("boom")), controller.signal),
    ).rejects.toThrow("boom");
  });
});
