import { describe, expect, it } from "vitest";
import { createListenerSet } from "@flotilla/node";

describe("createListenerSet", () => {
  it("calls listeners until they unsubscribe or their signal aborts", () => {
    const set = createListenerSet<number>();
    const heard: string[] = [];
    const stopA = set.add((n) => heard.push(`a${String(n)}`));
    const controller = new AbortController();
    set.add((n) => heard.push(`b${String(n)}`), { signal: controller.signal });
    set.emit(1);
    controller.abort();
    set.emit(2);
    stopA();
    set.emit(3);
    expect(heard).toEqual(["a1", "b1", "a2"]);
  });

  it("never adds a listener whose signal already aborted", () => {
    const set = createListenerSet();
    let calls = 0;
    set.add(() => calls++, { signal: AbortSignal.abort() });
    set.emit();
    expect(calls).toBe(0);
  });
});
