import { describe, expect, it } from "vitest";
import { compact } from "../src/compact.js";

describe("compact", () => {
  it("drops the keys whose value is undefined and keeps the order of the rest", () => {
    const region: string | undefined = undefined;
    const out = compact({
      name: "a",
      region,
      count: 0,
      flag: false,
      empty: "",
      gone: undefined,
    });
    expect(out).toEqual({ name: "a", count: 0, flag: false, empty: "" });
    expect(Object.keys(out)).toEqual(["name", "count", "flag", "empty"]);
    expect("region" in out).toBe(false);
  });

  it("keeps null, which is a value", () => {
    expect(compact({ a: null })).toEqual({ a: null });
  });

  it("types a possibly undefined key as optional and a defined one as required", () => {
    const maybe = Math.random() > 2 ? "x" : undefined;
    const out = compact({ always: 1, maybe });
    const always: number = out.always;
    const narrowed: string | undefined = out.maybe;
    expect(always).toBe(1);
    expect(narrowed).toBeUndefined();
  });
});
