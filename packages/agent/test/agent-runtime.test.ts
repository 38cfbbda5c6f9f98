// The agent end to end within one process: a real nats-server holding intents and bundle content
// (written as the hub writes them), a fake hub on real gRPC, a simulated cluster on a manual clock.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import type { ClusterIntent, UpgradeIntent } from "@flotilla/core";
import {
  createFileProgressStore,
  type ProgressRecord,
  type ProgressStore,
} from "@flotilla/agent";
import { createMemoryProgressStore } from "@flotilla/agent/testing";
import type { StatusReport } from "@flotilla/protocol";
import { startNatsServer, waitFor, type NatsServer } from "@flotilla/testkit";
import { FakeHub } from "./support/fake-hub.js";
import {
  phases,
  startAgent,
  type AgentHarness,
} from "./support/agent-harness.js";
import {
  bundleContent,
  connectTo,
  TestIntents,
} from "./support/test-intents.js";
import { compact } from "@flotilla/core";

const T0 = Date.UTC(2025, 0, 1);
const UPGRADE: UpgradeIntent = {
  run: "upgrade-1-31",
  type: "Full",
  target: {
    kubernetesVersion: "1.31.2",
    nodeImages: [{ pool: "system", from: "2025.01.01", to: "2025.02.01" }],
  },
};

function intent(
  generation: number,
  bundles: ClusterIntent["bundles"],
  upgrade?: UpgradeIntent,
): ClusterIntent {
  return {
    apiVersion: "flotilla.dev/v1",
    cluster: "c1",
    generation,
    bundles,
    ...compact({ upgrade }),
  };
}

function about(
  reports: readonly StatusReport[],
  subject: string,
): StatusReport[] {
  return reports.filter((r) =>
    r.subject.kind === "bundle"
      ? r.subject.bundle === subject
      : r.subject.upgradeId === subject,
  );
}

let server: NatsServer;
let nc: NatsConnection;
let prefixes = 0;

beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectTo(server.url);
});
afterAll(async () => {
  await nc.close();
  await server.stop();
});

async function setup(
  hubBehaviour: Parameters<typeof FakeHub.start>[0] = {},
): Promise<{
  hub: FakeHub;
  intents: TestIntents;
  prefix: string;
  [Symbol.asyncDispose]: () => Promise<void>;
}> {
  const prefix = `a${String(++prefixes)}`;
  const intents = await TestIntents.open(nc, prefix);
  // Heartbeats every hour: the manual clock jumps hours in these tests.
  const hub = await FakeHub.start({
    heartbeatIntervalMs: 3_600_000,
    ...hubBehaviour,
  });
  return {
    hub,
    intents,
    prefix,
    [Symbol.asyncDispose]: () => hub[Symbol.asyncDispose](),
  };
}

function connected(h: AgentHarness): Promise<true> {
  return waitFor(() => h.agent.session.state === "connected", {
    message: "the agent's session to be welcomed",
  });
}

describe("the agent", () => {
  test("applies a bundle from its content and reports Applying to Ready for the intent's generation", async () => {
    await using env = await setup();
    const { hub, intents, prefix } = env;
    await using h = await startAgent({ nc, hub, prefix });
    await connected(h);
    const digest = await intents.putContent(bundleContent("web", "r1"));
    await intents.publish(intent(1, { web: { revision: "r1", digest } }));

    const notReady = await waitFor(() =>
      hub.statusesOf("c1").find((r) => r.phase === "NotReady"),
    );
    expect(notReady).toMatchObject({
      generation: 1,
      subject: { kind: "bundle", bundle: "web", revision: "r1" },
      reasons: [
        {
          kind: "ConfigMap",
          namespace: "apps",
          name: "web-config",
          state: "NotReady",
        },
        {
          kind: "Deployment",
          namespace: "apps",
          name: "web",
          state: "NotReady",
        },
      ],
    });
    await h.clock.advance(5_000);
    await waitFor(() => hub.statusesOf("c1").at(-1)?.phase === "Ready");
    const reports = hub.statusesOf("c1");
    expect(phases(reports)).toEqual([
      "Applying",
      "Applied",
      "NotReady",
      "Ready",
    ]);
    expect(new Set(reports.map((r) => r.generation))).toEqual(new Set([1]));
    expect(h.cluster.kube.status("web")).toMatchObject({
      revision: "r1",
      phase: "Ready",
    });
    await waitFor(() => h.agent.status().lastAppliedGeneration === 1);
  });

  test("writes its progress before it reports the generation's last item finished", async () => {
    await using env = await setup();
    const { hub, intents, prefix } = env;
    // A progress store whose writes wait until the test lets them through.
    const memory = createMemoryProgressStore();
    const writes: { record: ProgressRecord; release: () => void }[] = [];
    const progress: ProgressStore = {
      load: (options) => memory.load(options),
      get: (cluster) => memory.get(cluster),
      put: (record) =>
        new Promise<void>((resolve) => {
          writes.push({
            record,
            release: () => {
              void memory.put(record).then(resolve);
            },
          });
        }),
    };
    await using h = await startAgent({ nc, hub, prefix, progress });
    await connected(h);
    const digest = await intents.putContent(bundleContent("web", "r1"));
    await intents.publish(intent(1, { web: { revision: "r1", digest } }));
    await waitFor(() =>
      hub.statusesOf("c1").some((r) => r.phase === "NotReady"),
    );
    await h.clock.advance(5_000);
    const write = await waitFor(() => writes[0]);
    expect(write.record).toMatchObject({ generation: 1, outcome: "Succeeded" });
    expect(hub.statusesOf("c1").some((r) => r.phase === "Ready")).toBe(false);
    write.release();
    await waitFor(() => hub.statusesOf("c1").at(-1)?.phase === "Ready");
  });

  test("holds an upgrade Pending while its window is closed and starts it when the window opens", async () => {
    await using env = await setup();
    const { hub, intents, prefix } = env;
    await using h = await startAgent({
      nc,
      hub,
      prefix,
      settings: {
        maintenance: {
          kubernetes: {
            schedule: { daily: null },
            startTime: "02:00",
            durationHours: 4,
          },
        },
      },
    });
    await connected(h);
    await intents.publish(intent(1, {}, UPGRADE));
    const opening = T0 + 2 * 3_600_000;
    const pending = await waitFor(() =>
      hub.statusesOf("c1").find((r) => r.phase === "Pending"),
    );
    expect(pending).toMatchObject({
      generation: 1,
      subject: { kind: "upgrade", upgradeId: "upgrade-1-31" },
      pendingUntilMs: opening,
      message:
        "Maintenance window for kubernetes closed until 2025-01-01T02:00:00Z",
    });
    await h.clock.advance(opening - T0 - 1);
    expect(phases(hub.statusesOf("c1"))).toEqual(["Pending"]);
    await h.clock.advance(1);
    await waitFor(() => hub.statusesOf("c1").at(-1)?.phase === "Applying");
    // The driver's timers may be set a moment after the Applying report: time moves on until Ready.
    await waitFor(async () => {
      await h.clock.advance(60_000);
      return hub.statusesOf("c1").at(-1)?.phase === "Ready";
    });
    const reports = hub.statusesOf("c1");
    expect(phases(reports)).toEqual(["Pending", "Applying", "Ready"]);
    const percents = reports
      .filter((r) => r.phase === "Applying")
      .map((r) => r.progressPercent);
    expect(percents).toEqual([0, 0, 50, 100]);
    expect(reports.every((r) => r.generation === 1)).toBe(true);
    // The new platform version goes to the hub as new facts.
    await waitFor(() =>
      hub
        .live("c1")!
        .messages.some(
          (m) => m.body === "facts" && m.facts?.kubernetesVersion === "1.31.2",
        ),
    );
  });

  test("sends windowsChanged when the owner's windows change, and a pending upgrade starts if they open", async () => {
    const dir = await mkdtemp(join(tmpdir(), "flotilla-agent-windows-"));
    try {
      const file = join(dir, "windows.json");
      const daily = (startTime: string): string =>
        JSON.stringify({
          maintenance: {
            kubernetes: {
              schedule: { daily: null },
              startTime,
              durationHours: 4,
            },
          },
        });
      await writeFile(file, daily("02:00"));
      await using env = await setup();
      const { hub, intents, prefix } = env;
      await using h = await startAgent({
        nc,
        hub,
        prefix,
        settings: { maintenanceFile: file },
        windowsReloadIntervalMs: 1_000,
      });
      await connected(h);
      await intents.publish(intent(1, {}, UPGRADE));
      await waitFor(() => hub.statusesOf("c1").at(-1)?.phase === "Pending");

      await writeFile(file, daily("00:00"));
      await h.clock.advance(1_000);
      const changed = await waitFor(() =>
        hub.live("c1")!.messages.find((m) => m.body === "windowsChanged"),
      );
      expect(changed.windowsChanged?.maintenance?.kubernetes).toMatchObject([
        { recurring: { startTime: "00:00", durationHours: 4 } },
      ]);
      await waitFor(() => hub.statusesOf("c1").at(-1)?.phase === "Applying");
      await h.clock.advance(60_000);
      await waitFor(() => hub.statusesOf("c1").at(-1)?.phase === "Ready");
      expect(phases(hub.statusesOf("c1"))).toEqual([
        "Pending",
        "Applying",
        "Ready",
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("reports Failed with the error for a failing bundle, missing content and a failing upgrade", async () => {
    await using env = await setup();
    const { hub, intents, prefix } = env;
    await using h = await startAgent({
      nc,
      hub,
      prefix,
      settings: { failures: { bundles: ["web"], versions: ["1.31.2"] } },
    });
    await connected(h);
    const web = await intents.putContent(bundleContent("web", "r1"));
    const missing = `sha256:${"0".repeat(64)}`;
    await intents.publish(
      intent(
        1,
        {
          web: { revision: "r1", digest: web },
          api: { revision: "r7", digest: missing },
        },
        UPGRADE,
      ),
    );
    await waitFor(() => about(hub.statusesOf("c1"), "upgrade-1-31").length > 0);
    const failed = await waitFor(async () => {
      await h.clock.advance(60_000);
      const last = (subject: string): StatusReport | undefined =>
        about(hub.statusesOf("c1"), subject).at(-1);
      const all = ["web", "api", "upgrade-1-31"].map(last);
      return all.every((r) => r?.phase === "Failed") && all;
    });
    expect(failed.map((r) => r?.error)).toEqual([
      'Cannot apply bundle "web" revision "r1" to cluster "c1": simulated failure (failures.bundles)',
      `Cannot apply bundle "api" revision "r7": Cannot fetch bundle content ${missing}: it is not stored`,
      'Cannot upgrade cluster "c1" for run "upgrade-1-31": control plane to 1.31.2 failed (simulated: failures.versions lists 1.31.2)',
    ]);
    expect(failed.map((r) => r?.generation)).toEqual([1, 1, 1]);
    await waitFor(() => h.agent.status().lastAppliedGeneration === 1);
  });

  test("a newer intent supersedes the older one's work, and bundles it drops are removed", async () => {
    await using env = await setup();
    const { hub, intents, prefix } = env;
    await using h = await startAgent({
      nc,
      hub,
      prefix,
      settings: { applyDuration: { fixedSeconds: 10 } },
    });
    await connected(h);
    const r1 = await intents.putContent(bundleContent("web", "r1"));
    const r2 = await intents.putContent(bundleContent("web", "r2"));
    const api = await intents.putContent(bundleContent("api", "a1"));
    await intents.publish(intent(1, { web: { revision: "r1", digest: r1 } }));
    await waitFor(() => h.cluster.kube.status("web")?.revision === "r1");
    await intents.publish(intent(2, { web: { revision: "r2", digest: r2 } }));
    await waitFor(() => h.cluster.kube.status("web")?.revision === "r2");
    // Time moves on until r2 is Ready: the apply's timer may be set a moment after its report.
    await waitFor(async () => {
      await h.clock.advance(5_000);
      return about(hub.statusesOf("c1"), "web").at(-1)?.phase === "Ready";
    });
    const web = about(hub.statusesOf("c1"), "web");
    // Generation 1's revision never got past Applying; everything after is about r2 at gen 2.
    const first = web.filter((r) => r.generation === 1);
    expect(first.length).toBeGreaterThan(0);
    expect(first.every((r) => r.phase === "Applying")).toBe(true);
    expect(
      web
        .filter((r) => r.phase !== "Applying")
        .every(
          (r) =>
            r.generation === 2 &&
            r.subject.kind === "bundle" &&
            r.subject.revision === "r2",
        ),
    ).toBe(true);

    await intents.publish(intent(3, { api: { revision: "a1", digest: api } }));
    await waitFor(() => h.cluster.kube.status("web") === undefined);
    await waitFor(() => about(hub.statusesOf("c1"), "api").length > 0);
    await waitFor(async () => {
      await h.clock.advance(5_000);
      const held = await h.cluster.kube.listBundles();
      return held.length === 1 && held[0]?.bundle === "api";
    });
    const after = hub.statusesOf("c1").filter((r) => r.generation === 3);
    expect(about(after, "web")).toEqual([]);
  });

  test("after the hub restarts it reconnects with backoff and reports the current status again; resync does the same", async () => {
    await using env = await setup();
    const { hub, intents, prefix } = env;
    await using h = await startAgent({
      nc,
      hub,
      prefix,
      settings: { timeToReady: { fixedSeconds: 0 } },
    });
    await connected(h);
    const digest = await intents.putContent(bundleContent("web", "r1"));
    await intents.publish(intent(4, { web: { revision: "r1", digest } }));
    await waitFor(() => hub.statusesOf("c1").at(-1)?.phase === "Ready");

    await hub.restart();
    await waitFor(() => h.agent.session.state === "waiting");
    // Let the backoff pass on the manual clock until the session is back.
    await waitFor(
      async () => {
        if (h.agent.session.state === "waiting") await h.clock.advance(30_000);
        return (
          h.agent.session.state === "connected" &&
          hub.sessionsOf("c1").length === 2
        );
      },
      { timeoutMs: 10_000 },
    );
    const second = hub.live("c1")!;
    const resent = await waitFor(
      () => second.statuses().length === 1 && second.statuses(),
    );
    expect(resent).toMatchObject([
      {
        sequence: 1,
        generation: 4,
        phase: "Ready",
        subject: { bundle: "web", revision: "r1" },
      },
    ]);
    expect(second.hello?.lastAppliedGeneration).toBe(4);

    second.send({ resync: { reason: "test" } });
    const again = await waitFor(
      () => second.statuses().length === 2 && second.statuses(),
    );
    expect(again[1]).toMatchObject({
      sequence: 2,
      generation: 4,
      phase: "Ready",
    });
  });

  test("a restarted agent with the same state dir does not redo a finished generation but reports it Ready", async () => {
    const dir = await mkdtemp(join(tmpdir(), "flotilla-agent-"));
    try {
      const file = join(dir, "progress.json");
      await using env = await setup();
      const { hub, intents, prefix } = env;
      const digest = await intents.putContent(bundleContent("web", "r1"));
      await intents.publish(
        intent(2, { web: { revision: "r1", digest } }, UPGRADE),
      );
      {
        await using first = await startAgent({
          nc,
          hub,
          prefix,
          progress: createFileProgressStore(file),
        });
        await connected(first);
        await waitFor(() => {
          const reports = hub.statusesOf("c1");
          return (
            about(reports, "upgrade-1-31").at(-1)?.phase === "Applying" &&
            about(reports, "web").at(-1)?.phase === "NotReady"
          );
        });
        await first.clock.advance(60_000);
        await waitFor(() => first.agent.status().lastAppliedGeneration === 2);
      }
      const before = hub.statusesOf("c1").length;
      const spies: { calls: () => number }[] = [];
      await using second = await startAgent({
        nc,
        hub,
        prefix,
        progress: createFileProgressStore(file),
        prepare: (cluster) => {
          const start = vi.spyOn(cluster.upgrades, "start");
          const apply = vi.spyOn(cluster.kube, "applyBundle");
          spies.push({
            calls: () => start.mock.calls.length + apply.mock.calls.length,
          });
        },
      });
      await connected(second);
      const session = hub.live("c1")!;
      expect(session.hello?.lastAppliedGeneration).toBe(2);
      const reports = await waitFor(
        () => session.statuses().length === 2 && session.statuses(),
      );
      expect(
        reports.map((r) => [r.generation, r.subject.kind, r.phase]).sort(),
      ).toEqual([
        [2, "bundle", "Ready"],
        [2, "upgrade", "Ready"],
      ]);
      expect(hub.statusesOf("c1").length).toBe(before + 2);
      expect(spies.map((s) => s.calls())).toEqual([0]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
