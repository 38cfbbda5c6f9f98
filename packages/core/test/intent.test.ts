import { describe, expect, it } from "vitest";
import {
  canonicalIntentJson,
  changeIntent,
  emptyIntent,
  parseIntent,
} from "../src/intent.js";

const setWeb = {
  type: "SetBundle",
  bundle: "web",
  revision: "3",
  digest: "sha256:aa",
} as const;

describe("cluster intents", () => {
  it("every change gets the next generation; an unchanged intent keeps its generation and identity", () => {
    const a = changeIntent(emptyIntent("c-1"), setWeb);
    expect(a).toEqual({
      apiVersion: "flotilla.dev/v1",
      cluster: "c-1",
      generation: 1,
      bundles: { web: { revision: "3", digest: "sha256:aa" } },
    });
    expect(changeIntent(a, setWeb)).toBe(a);
    const b = changeIntent(a, {
      type: "SetBundle",
      bundle: "web",
      revision: "4",
      digest: "sha256:bb",
    });
    expect(b.generation).toBe(2);
    expect(changeIntent(b, { type: "RemoveBundle", bundle: "nope" })).toBe(b);
    expect(
      changeIntent(b, { type: "RemoveBundle", bundle: "web" }),
    ).toMatchObject({ generation: 3, bundles: {} });
  });

  it("a grown forceSync is a new generation at the same revision; 0 is written as absent", () => {
    const a = changeIntent(emptyIntent("c-1"), { ...setWeb, forceSync: 0 });
    expect(a.bundles["web"]).toEqual({ revision: "3", digest: "sha256:aa" });
    expect(changeIntent(a, setWeb)).toBe(a);
    const b = changeIntent(a, { ...setWeb, forceSync: 1 });
    expect(b).toMatchObject({
      generation: 2,
      bundles: { web: { revision: "3", digest: "sha256:aa", forceSync: 1 } },
    });
    expect(parseIntent(JSON.parse(canonicalIntentJson(b)))).toMatchObject({
      ok: true,
    });
    const bad = {
      ...b,
      bundles: { web: { ...b.bundles["web"], forceSync: 0 } },
    };
    expect(parseIntent(bad)).toMatchObject({
      ok: false,
      problems: [{ path: "bundles.web.forceSync" }],
    });
  });

  it("an upgrade is cleared only by the run that set it", () => {
    const up = changeIntent(emptyIntent("c-1"), {
      type: "SetUpgrade",
      upgrade: {
        run: "r1",
        type: "Full",
        target: { kubernetesVersion: "1.31.2" },
      },
    });
    expect(up.generation).toBe(1);
    expect(
      changeIntent(up, {
        type: "SetUpgrade",
        upgrade: {
          run: "r1",
          type: "Full",
          target: { kubernetesVersion: "1.31.2" },
        },
      }),
    ).toBe(up);
    expect(changeIntent(up, { type: "ClearUpgrade", run: "r2" })).toBe(up);
    const cleared = changeIntent(up, { type: "ClearUpgrade", run: "r1" });
    expect(cleared).toEqual({
      apiVersion: "flotilla.dev/v1",
      cluster: "c-1",
      generation: 2,
      bundles: {},
    });
    expect("upgrade" in cleared).toBe(false);
  });

  it("the canonical text does not depend on key order, so equal intents hash equally", () => {
    const a = changeIntent(changeIntent(emptyIntent("c"), setWeb), {
      type: "SetBundle",
      bundle: "api",
      revision: "1",
      digest: "sha256:cc",
    });
    const reordered = {
      bundles: { api: a.bundles["api"]!, web: a.bundles["web"]! },
      generation: a.generation,
      cluster: "c",
      apiVersion: a.apiVersion,
    } as const;
    expect(canonicalIntentJson(reordered)).toBe(canonicalIntentJson(a));
    expect(canonicalIntentJson(a)).toBe(
      '{"apiVersion":"flotilla.dev/v1","bundles":{"api":{"digest":"sha256:cc","revision":"1"},"web":{"digest":"sha256:aa","revision":"3"}},"cluster":"c","generation":2}',
    );
  });

  it("an upgrade intent must say its type, so the agent knows its driver mode and window scope", () => {
    const intent = {
      apiVersion: "flotilla.dev/v1",
      cluster: "c",
      generation: 1,
      bundles: {},
      upgrade: { run: "r", target: {} },
    };
    const parsed = parseIntent(intent);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(parsed.problems.map((p) => p.path)).toEqual(["upgrade.type"]);
  });

  it("parses a valid intent and rejects malformed ones with paths", () => {
    const intent = changeIntent(emptyIntent("c-1"), setWeb);
    expect(parseIntent(JSON.parse(JSON.stringify(intent)))).toEqual({
      ok: true,
      value: intent,
    });
    const bad = parseIntent({
      ...intent,
      generation: 0,
      extra: true,
      bundles: { web: { revision: "" } },
    });
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(bad.problems.map((p) => p.path).sort()).toEqual([
        "bundles.web.digest",
        "bundles.web.revision",
        "extra",
        "generation",
      ]);
  });
});
