/**
 * The version catalogue with real processes (nats-server, the hub, simulated agents in their own
 * process, the flotilla CLI; docs/engine.md#the-version-catalogue): agents report catalogues from
 * files they re-read → `flotilla versions` shows them → an operator publishes releases (a release
 * older than the fleet is refused) → a Latest node-image run moves each pool to the newest image
 * offered to it → a Consistent run picks, per family, the newest version every member can take and
 * shows it before it starts. A malformed or implausible catalogue from an agent is refused and
 * counted, and the cluster keeps its previous one.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { wire } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectScriptedAgent } from "../../packages/hub/test/scripted-agent.js";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

const FAMILY = "ubuntu-22.04";
let e2e: E2E;
let work: string;
let eastFile: string;
let westFile: string;

function catalogue(
  images: readonly string[],
  kubernetes: readonly string[] = [],
) {
  return JSON.stringify({
    catalogue: { kubernetes, nodeImages: { [FAMILY]: images } },
  });
}

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-catalogue-"));
  eastFile = join(work, "east.json");
  westFile = join(work, "west.json");
  await writeFile(eastFile, catalogue(["2026.12.01"], ["1.30.4"]));
  await writeFile(westFile, catalogue(["2026.12.01", "2026.12.15"]));
  e2e = await startE2E({ httpListen: "127.0.0.1:0" });
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("east-", 2, { geo: "east" }, { catalogueFile: eastFile }),
      clusters("west-", 2, { geo: "west" }, { catalogueFile: westFile }),
    ]),
    ["--windows-reload-interval", "200ms"],
  );
  await e2e.connected(4);
}, 60_000);

afterEach(async () => {
  await e2e.stop();
  await rm(work, { recursive: true, force: true });
}, 30_000);

async function versions(): Promise<wire.ClusterVersions__Output[]> {
  const answer = JSON.parse(
    await e2e.ok("versions", "-o", "json"),
  ) as wire.ListClusterVersionsResponse__Output;
  return answer.clusters;
}

/** Per cluster: its pool's image, and the newest image offered to it (or "-"). */
async function images(): Promise<Record<string, string>> {
  return Object.fromEntries(
    (await versions()).map((c) => {
      const pool = c.nodePools[0];
      return [
        c.cluster,
        `${pool?.imageVersion ?? "?"} -> ${pool?.newestImageVersion ?? "-"}`,
      ];
    }),
  );
}

async function finished(run: string): Promise<void> {
  await waitFor(async () => (await e2e.run(run)).state === "Completed", {
    timeoutMs: 30_000,
    intervalMs: 200,
    message: `run ${run} to complete`,
  });
}

describe("the version catalogue, end to end", () => {
  it(
    "shows agents' catalogues, takes releases, and runs Latest and Consistent node-image upgrades",
    { timeout: 120_000 },
    async () => {
      await waitFor(
        async () =>
          (await versions()).every((c) => c.reportsCatalogue)
            ? true
            : undefined,
        { timeoutMs: 15_000, message: "every agent to report its catalogue" },
      );
      expect(await images()).toEqual({
        "east-01": "2026.11.20 -> 2026.12.01",
        "east-02": "2026.11.20 -> 2026.12.01",
        "west-01": "2026.11.20 -> 2026.12.15",
        "west-02": "2026.11.20 -> 2026.12.15",
      });
      const table = await e2e.ok("versions");
      expect(table).toMatch(
        /east-01\s+1\.29\.9\s+1\.30\.4\s+agent \+ releases/,
      );
      expect(table).toMatch(/west-01\s+1\.29\.9\s+none\s+agent \+ releases/);
      expect(table).toMatch(
        /west-02\s+system\s+ubuntu-22\.04\s+2026\.11\.20\s+2026\.12\.15/,
      );
      // east reports 1.30.4, which is one minor ahead: an upgrade it can take.
      expect(
        (await versions()).find((c) => c.cluster === "east-01")?.upgrades,
      ).toEqual([{ version: "1.30.4", lts: false, preview: false }]);

      // Releases: refused when older than the fleet, with the field; published otherwise.
      const old = await e2e.cli("release", "add", "kubernetes", "1.28.3");
      expect(old.code).toBe(2);
      expect(old.stderr).toContain("version");
      expect(old.stderr).toContain(
        "is older than what every cluster already runs",
      );
      const oldImage = await e2e.cli(
        "release",
        "add",
        "node-image",
        FAMILY,
        "2026.10.01",
      );
      expect(oldImage.code).toBe(2);
      expect(oldImage.stderr).toContain(
        "is older than the image every node pool",
      );
      const malformed = await e2e.cli("release", "add", "kubernetes", "1.30");
      expect(malformed.code).toBe(2);
      expect(malformed.stderr).toContain("version");
      expect(
        await e2e.ok(
          "release",
          "add",
          "kubernetes",
          "1.30.6",
          "--lts",
          "--reason",
          "LTS patch",
        ),
      ).toBe("Published Kubernetes 1.30.6 (LTS).\n");
      expect(await e2e.ok("release", "list")).toMatch(
        /kubernetes\s+-\s+1\.30\.6\s+LTS\s+e2e/,
      );
      expect(
        (await versions()).find((c) => c.cluster === "west-01")?.upgrades,
      ).toEqual([{ version: "1.30.6", lts: true, preview: false }]);
      const audit = await e2e.ok("audit", "list", "-o", "json");
      expect(audit).toContain("AddRelease");
      expect(audit).toContain("kubernetes 1.30.6");

      // Latest: each pool moves to the newest image offered to its own cluster.
      const strategy = join(work, "strategy.json");
      await writeFile(
        strategy,
        JSON.stringify({
          stages: [
            {
              name: "all",
              memberSelector: { byLabel: "geo in (east,west)" },
              maxConcurrency: 2,
            },
          ],
        }),
      );
      await e2e.ok("strategy", "create", "all", "-f", strategy);
      await e2e.ok(
        "run",
        "create",
        "img-latest",
        "--strategy",
        "all",
        "--node-image-only",
      );
      await e2e.ok("run", "start", "img-latest");
      await finished("img-latest");
      await waitFor(
        async () => {
          const now = await images();
          return now["west-01"]?.startsWith("2026.12.15") === true &&
            now["east-01"]?.startsWith("2026.12.01") === true
            ? now
            : undefined;
        },
        { timeoutMs: 15_000, message: "the agents to report their new images" },
      );
      expect(await images()).toEqual({
        "east-01": "2026.12.01 -> -",
        "east-02": "2026.12.01 -> -",
        "west-01": "2026.12.15 -> -",
        "west-02": "2026.12.15 -> -",
      });

      // The provider releases new images; each agent re-reads its file and re-sends its facts.
      await writeFile(
        eastFile,
        catalogue(["2026.12.01", "2026.12.20"], ["1.30.4"]),
      );
      await writeFile(
        westFile,
        catalogue(["2026.12.15", "2026.12.20", "2026.12.31"]),
      );
      await waitFor(
        async () => {
          const now = await images();
          return now["east-02"] === "2026.12.01 -> 2026.12.20" &&
            now["west-02"] === "2026.12.15 -> 2026.12.31"
            ? now
            : undefined;
        },
        { timeoutMs: 15_000, message: "the new catalogues to reach the hub" },
      );

      // Consistent: the newest version every member can take, chosen and shown before the start.
      await e2e.ok(
        "run",
        "create",
        "img-common",
        "--strategy",
        "all",
        "--node-image-only",
        "--node-image-selection",
        "Consistent",
      );
      expect((await e2e.run("img-common")).consistentNodeImages).toEqual({
        [FAMILY]: "2026.12.20",
      });
      expect(await e2e.ok("run", "status", "img-common")).toContain(
        `Node images (Consistent): ${FAMILY} 2026.12.20`,
      );
      await e2e.ok("run", "start", "img-common");
      await finished("img-common");
      await waitFor(
        async () =>
          Object.values(await images()).every((v) => v.startsWith("2026.12.20"))
            ? true
            : undefined,
        { timeoutMs: 15_000, message: "every pool on the common image" },
      );
      expect((await images())["west-01"]).toBe("2026.12.20 -> 2026.12.31");
    },
  );

  it("refuses a malformed or implausible catalogue from an agent, counts it, and keeps the previous", async () => {
    const agent = connectScriptedAgent(e2e.hubAddress);
    agent.hello("rogue-1");
    await agent.next("welcome");
    const facts = (catalogueValue: unknown): wire.AgentMessage => ({
      facts: {
        labels: {},
        kubernetesVersion: "1.29.9",
        nodePools: [
          { name: "system", imageFamily: FAMILY, imageVersion: "2026.11.20" },
        ],
        catalogue: catalogueValue as wire.VersionCatalogue,
      },
    });
    agent.send(facts({ kubernetes: [{ version: "1.30.4" }], nodePools: [] }));
    const rogue = async () =>
      (
        JSON.parse(
          await e2e.ok("versions", "--cluster", "rogue-1", "-o", "json"),
        ) as wire.ListClusterVersionsResponse__Output
      ).clusters[0];
    await waitFor(
      async () =>
        (await rogue())?.reportsCatalogue === true ? true : undefined,
      {
        timeoutMs: 10_000,
        message: "rogue-1's first catalogue",
      },
    );
    // 10,000 versions; then a 200 KB version string; then a malformed version.
    agent.send(
      facts({
        kubernetes: Array.from({ length: 10_000 }, (_, i) => ({
          version: `1.30.${String(i)}`,
        })),
        nodePools: [],
      }),
    );
    agent.send(
      facts({
        kubernetes: [],
        nodePools: [{ pool: "system", imageVersions: ["9".repeat(200_000)] }],
      }),
    );
    agent.send(facts({ kubernetes: [{ version: "latest" }], nodePools: [] }));
    const serving = await e2e.hub().waitForLine(/serving gRPC/);
    const http = /HTTP on (\S+)$/.exec(serving)?.[1];
    expect(http, serving).toBeDefined();
    const counted = async (reason: string): Promise<number> => {
      const text = await (await fetch(`http://${http ?? ""}/metrics`)).text();
      const line = text
        .split("\n")
        .find((l) =>
          l.startsWith(
            `flotilla_hub_catalogue_rejected_total{reason="${reason}"}`,
          ),
        );
      return Number(line?.split(" ").pop() ?? "NaN");
    };
    await waitFor(
      async () =>
        (await counted("implausible")) === 2 &&
        (await counted("malformed")) === 1
          ? true
          : undefined,
      { timeoutMs: 10_000, message: "the refusals to be counted" },
    );
    // The session stays open, the cluster keeps its previous catalogue.
    expect(agent.ended()).toBeUndefined();
    expect((await rogue())?.upgrades).toEqual([
      { version: "1.30.4", lts: false, preview: false },
    ]);
    expect(e2e.hub().output()).toContain(
      "refused the version catalogue of a cluster's agent",
    );
    agent.close();
  });
});
