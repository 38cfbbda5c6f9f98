import { describe, expect, test } from "vitest";
import { encodeFences, parseFences } from "../src/intents/intent-fences.js";

describe("the Flotilla-Fences header", () => {
  test("encodes the map highest epoch first, and parses back to it", () => {
    const fences = new Map([
      ["bundles", 7],
      ["run/a", 41],
    ]);
    const text = encodeFences(fences);
    expect(text).toBe("run/a=41,bundles=7");
    expect(parseFences(text)).toEqual({ ok: true, value: fences });
  });

  test("no fences is no header, and no header is no fences", () => {
    expect(encodeFences(new Map())).toBeUndefined();
    expect(parseFences(undefined)).toEqual({ ok: true, value: new Map() });
    expect(parseFences("")).toEqual({ ok: true, value: new Map() });
  });

  test("a malformed value names every bad entry with its index and text", () => {
    const parsed = parseFences(
      "run/a,bundles=0,run/b=1,run/b=2,bad unit=3,x=1e3",
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problems.map((p) => [p.path, p.message, p.value])).toEqual([
      ["Flotilla-Fences[0]", "must be <unit>=<epoch>", "run/a"],
      ["Flotilla-Fences[1]", "must be a positive integer", "bundles=0"],
      ["Flotilla-Fences[3]", "names a unit twice", "run/b=2"],
      [
        "Flotilla-Fences[4]",
        expect.stringMatching(/^must be 1 to 100 characters/),
        "bad unit=3",
      ],
      ["Flotilla-Fences[5]", "must be a positive integer", "x=1e3"],
    ]);
  });
});
