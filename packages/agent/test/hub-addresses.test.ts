// The hub's addresses: `--hub` as one HOST:PORT or a comma-separated list, each address checked
// with a message naming the flag, the value and the address at fault; and the order each agent
// goes round them in, drawn from an injected random source so every order is known.
import { describe, expect, test } from "vitest";
import { parseAgentConfig } from "@flotilla/agent";
import { mulberry32 } from "@flotilla/agent/testing";
import { createBackoff } from "@flotilla/node";
import { createHubRotation } from "../src/hub/hub-rotation.js";

const BASE = ["--insecure-plaintext", "--simulated", "cluster.yaml"];

function hubOf(
  argv: readonly string[],
  env: Record<string, string> = {},
): unknown {
  const parsed = parseAgentConfig([...BASE, ...argv], env);
  return parsed.type === "config" ? parsed.config.hub : parsed;
}

describe("--hub", () => {
  test("one address is a list of one, as before", () => {
    expect(hubOf([])).toEqual(["127.0.0.1:7070"]);
    expect(hubOf(["--hub", "hub.example:7000"])).toEqual(["hub.example:7000"]);
    expect(hubOf(["--hub", "[::1]:7070"])).toEqual(["[::1]:7070"]);
  });

  test("several addresses separated by commas, in the order given, from the flag or the variable", () => {
    expect(
      hubOf(["--hub", "hub-0.hub:7070,hub-1.hub:7070, 10.0.0.3:7071"]),
    ).toEqual(["hub-0.hub:7070", "hub-1.hub:7070", "10.0.0.3:7071"]);
    expect(hubOf([], { FLOTILLA_HUB: "a:1,[fd00::2]:2" })).toEqual([
      "a:1",
      "[fd00::2]:2",
    ]);
  });

  test("every bad address is named, with the flag or variable and the whole value", () => {
    expect(hubOf(["--hub", "a:1,nohost,b:99999"])).toEqual({
      type: "invalid",
      problems: [
        '--hub "a:1,nohost,b:99999": "nohost" is not HOST:PORT with a port from 1 to 65535 (one HOST:PORT, or several separated by commas)',
        '--hub "a:1,nohost,b:99999": "b:99999" is not HOST:PORT with a port from 1 to 65535 (one HOST:PORT, or several separated by commas)',
      ],
    });
    expect(hubOf([], { FLOTILLA_HUB: "a:1,,b:2" })).toEqual({
      type: "invalid",
      problems: [
        'FLOTILLA_HUB "a:1,,b:2": address 2 is empty (one HOST:PORT, or several separated by commas)',
      ],
    });
    expect(hubOf(["--hub", "a:1,b:2,a:1"])).toEqual({
      type: "invalid",
      problems: [
        '--hub "a:1,b:2,a:1": "a:1" is given twice (one HOST:PORT, or several separated by commas)',
      ],
    });
    expect(hubOf(["--hub", "a:1,"])).toMatchObject({
      problems: [expect.stringContaining("address 2 is empty")],
    });
  });
});

describe("hub rotation", () => {
  const HUBS = ["hub-0:7070", "hub-1:7070", "hub-2:7070"];

  test("one address is always itself and draws nothing", () => {
    let draws = 0;
    const rotation = createHubRotation("hub:7070", () => {
      draws++;
      return 0.5;
    });
    expect(rotation.current).toBe("hub:7070");
    expect(rotation.advance()).toBe(false);
    expect(rotation.current).toBe("hub:7070");
    expect(draws).toBe(0);
  });

  test("goes round every address in an order drawn once, starting where the draw says", () => {
    // Fisher-Yates with draws 0 and 0.99: swap 2<->0, then 1<->1.
    const draws = [0, 0.99];
    const rotation = createHubRotation(HUBS, () => draws.shift() ?? 0);
    expect(rotation.order).toEqual(["hub-2:7070", "hub-1:7070", "hub-0:7070"]);
    const seen = [rotation.current];
    for (let i = 0; i < 4; i++) {
      expect(rotation.advance()).toBe(true);
      seen.push(rotation.current);
    }
    expect(seen).toEqual([
      "hub-2:7070",
      "hub-1:7070",
      "hub-0:7070",
      "hub-2:7070",
      "hub-1:7070",
    ]);
    expect(draws).toEqual([]);
  });

  test("10,000 agents spread over the replicas, and those of a replica that dies spread over the others, at jittered times", () => {
    const agents = Array.from({ length: 10_000 }, (_, i) => {
      const random = mulberry32(i + 1);
      return {
        rotation: createHubRotation(HUBS, random),
        backoff: createBackoff({ random }),
      };
    });
    const share = (addresses: readonly string[], address: string) =>
      addresses.filter((a) => a === address).length / addresses.length;

    // Where they start: about a third each.
    const first = agents.map((a) => a.rotation.current);
    for (const hub of HUBS) expect(share(first, hub)).toBeCloseTo(1 / 3, 1);

    // hub-0 dies: its agents move on, about half to each of the others.
    const orphans = agents.filter((a) => a.rotation.current === "hub-0:7070");
    for (const a of orphans) expect(a.rotation.advance()).toBe(true);
    const next = orphans.map((a) => a.rotation.current);
    expect(share(next, "hub-0:7070")).toBe(0);
    expect(share(next, "hub-1:7070")).toBeCloseTo(1 / 2, 1);
    expect(share(next, "hub-2:7070")).toBeCloseTo(1 / 2, 1);

    // ...and not at the same instant: the first delays (500 ms ±50%) spread over 250-750 ms,
    // no 50 ms slot taking more than about a tenth of them.
    const delays = orphans.map((a) => a.backoff.next());
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(250);
    expect(Math.max(...delays)).toBeLessThanOrEqual(750);
    const slots = new Map<number, number>();
    for (const d of delays) {
      const slot = Math.floor(d / 50);
      slots.set(slot, (slots.get(slot) ?? 0) + 1);
    }
    expect(slots.size).toBeGreaterThanOrEqual(10);
    for (const count of slots.values())
      expect(count / delays.length).toBeLessThan(0.13);
  });
});
