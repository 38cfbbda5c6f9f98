/**
 * `flotilla hub status` against a fake AdminService: the replicas table (uptime, sessions, leases
 * counted and named when few, eligibility), the streams with their leader and health (a copy
 * offline or behind, no leader, unreadable), a hub without streams, and `-o json`.
 */
import { describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { NOW_MS } from "./fixtures.js";

const MINUTE_MS = 60_000;

function replica(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    address: `${id}.hub.svc:7443`,
    version: "0.4.0",
    startedAtMs: NOW_MS - 90 * MINUTE_MS,
    sessions: 0,
    leases: [],
    eligible: true,
    seenAtMs: NOW_MS - 2_000,
    ...overrides,
  };
}

const STATUS = {
  replica: "hub-1",
  replicas: [
    replica("hub-0", {
      sessions: 412,
      leases: ["bundles", "run/upgrade-1-31"],
    }),
    replica("hub-1", {
      sessions: 388,
      leases: ["run/a", "run/b", "run/c", "run/d"],
      startedAtMs: NOW_MS - 5 * MINUTE_MS,
    }),
    replica("hub-2", { version: "0.5.0", eligible: false }),
  ],
  streams: [
    {
      label: 'KV bucket "flotilla-runs"',
      name: "KV_flotilla-runs",
      replicas: 3,
      leader: "nats-0",
      peers: [
        { name: "nats-1", current: true, lag: 0, offline: false },
        { name: "nats-2", current: true, lag: 0, offline: false },
      ],
      error: "",
    },
    {
      label: 'KV bucket "flotilla-leases"',
      name: "KV_flotilla-leases",
      replicas: 3,
      leader: "nats-1",
      peers: [
        { name: "nats-0", current: false, lag: 12, offline: false },
        { name: "nats-2", current: false, lag: 0, offline: true },
      ],
      error: "",
    },
    {
      label: 'stream "flotilla-audit"',
      name: "flotilla-audit",
      replicas: 3,
      leader: "",
      peers: [],
      error: "",
    },
    {
      label: 'object store "flotilla-content"',
      name: "OBJ_flotilla-content",
      replicas: 0,
      leader: "",
      peers: [],
      error: "stream not found",
    },
  ],
};

describe("hub status", () => {
  it("prints the replicas, then the streams with their leader and health", async () => {
    await using hub = await startFakeHub({
      unary: { GetHubStatus: () => STATUS },
    });
    const { code, out, err } = await cliAgainst(hub, ["hub", "status"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(hub.requests("GetHubStatus")).toHaveLength(1);
    expect(out).toBe(
      [
        "Answered by replica hub-1; 3 live replica(s).",
        "",
        "ID     ADDRESS             VERSION  UP SINCE    SESSIONS  LEASES                         ELIGIBLE  SEEN",
        "hub-0  hub-0.hub.svc:7443  0.4.0    1h 30m ago       412  2 (bundles, run/upgrade-1-31)  yes       2s ago",
        "hub-1  hub-1.hub.svc:7443  0.4.0    5m ago           388  4                              yes       2s ago",
        "hub-2  hub-2.hub.svc:7443  0.5.0    1h 30m ago         0  0                              no        2s ago",
        "",
        "STREAM                WHAT                             REPLICAS  LEADER  PEERS          HEALTH",
        'KV_flotilla-runs      KV bucket "flotilla-runs"               3  nats-0  nats-1,nats-2  healthy',
        'KV_flotilla-leases    KV bucket "flotilla-leases"             3  nats-1  nats-0,nats-2  nats-0 behind by 12, nats-2 offline',
        'flotilla-audit        stream "flotilla-audit"                 3  -       -              no leader',
        'OBJ_flotilla-content  object store "flotilla-content"         -  -       -              unreadable: stream not found',
        "",
      ].join("\n"),
    );
  });

  it("says so when the hub has no streams", async () => {
    await using hub = await startFakeHub({
      unary: {
        GetHubStatus: () => ({
          replica: "127.0.0.1:7443",
          replicas: [replica("127.0.0.1:7443")],
          streams: [],
        }),
      },
    });
    const { code, out } = await cliAgainst(hub, ["hub", "status"]);
    expect(code).toBe(0);
    expect(out).toContain(
      "No JetStream streams: this hub keeps its state elsewhere.",
    );
  });

  it("-o json prints the hub's answer", async () => {
    await using hub = await startFakeHub({
      unary: { GetHubStatus: () => STATUS },
    });
    const { code, out } = await cliAgainst(hub, [
      "hub",
      "status",
      "-o",
      "json",
    ]);
    expect(code).toBe(0);
    const answer = JSON.parse(out) as typeof STATUS;
    expect(answer.replica).toBe("hub-1");
    expect(answer.replicas.map((r) => r.id)).toEqual([
      "hub-0",
      "hub-1",
      "hub-2",
    ]);
    expect(answer.replicas[0]).toMatchObject({
      sessions: 412,
      leases: ["bundles", "run/upgrade-1-31"],
      startedAtMs: NOW_MS - 90 * MINUTE_MS,
    });
    expect(answer.streams[1]?.peers[1]).toEqual({
      name: "nats-2",
      current: false,
      lag: 0,
      offline: true,
    });
  });
});
