/**
 * The auto-upgrade trigger with real processes (nats-server, the hub, simulated agents, the CLI;
 * docs/engine.md#auto-upgrade-profiles): a NodeImage profile makes and starts exactly one run per
 * new image, with no operator, through the hub being killed before the run is made (the release
 * reaches the catalogue while the hub is down) and right after it is made (an operator's release,
 * the hub killed as soon as the run exists). Each run completes, moves the images, names its
 * origin in `run status` and is in the audit log as the hub's own.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { wire } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

const FAMILY = "ubuntu-22.04";
let e2e: E2E;
let work: string;
let catalogueFile: string;

function catalogue(images: readonly string[]): string {
  return JSON.stringify({
    catalogue: { kubernetes: [], nodeImages: { [FAMILY]: images } },
  });
}

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-aup-trigger-"));
  catalogueFile = join(work, "catalogue.json");
  await writeFile(catalogueFile, catalogue([]));
  e2e = await startE2E();
  await e2e.startAgents(
    "fleet",
    fleetFile([clusters("node-", 3, { env: "prod" }, { catalogueFile })]),
    ["--windows-reload-interval", "200ms"],
  );
  await e2e.connected(3);
}, 60_000);

afterEach(async () => {
  await e2e.stop();
  await rm(work, { recursive: true, force: true });
}, 30_000);

/** The runs the profile made, as `run list -o json` shows them. */
async function profileRuns(): Promise<wire.RunSummary__Output[]> {
  const out = await e2e.ok("run", "list", "-o", "json");
  return (JSON.parse(out) as { runs: wire.RunSummary__Output[] }).runs.filter(
    (r) => r.origin?.profile === "nightly",
  );
}

async function completed(count: number): Promise<wire.RunSummary__Output[]> {
  return waitFor(
    async () => {
      const runs = await profileRuns();
      return runs.length === count &&
        runs.every((r) => r.state === "RUN_STATE_COMPLETED")
        ? runs
        : undefined;
    },
    {
      timeoutMs: 40_000,
      intervalMs: 250,
      message: `${String(count)} completed runs of the profile`,
    },
  );
}

/** Every cluster's node image, once all three report `version`. */
async function imagesAt(version: string): Promise<void> {
  await waitFor(
    async () => {
      const out = await e2e.ok("versions", "-o", "json");
      const { clusters: all } = JSON.parse(
        out,
      ) as wire.ListClusterVersionsResponse__Output;
      return all.length === 3 &&
        all.every((c) => c.nodePools[0]?.imageVersion === version)
        ? true
        : undefined;
    },
    { timeoutMs: 20_000, message: `every cluster on ${version}` },
  );
}

describe("the auto-upgrade trigger, end to end", () => {
  it(
    "makes and starts exactly one run per new image across a hub killed before and after making it",
    { timeout: 180_000 },
    async () => {
      await e2e.ok(
        "autoupgradeprofile",
        "create",
        "nightly",
        "--channel",
        "NodeImage",
      );
      expect(await e2e.ok("autoupgradeprofile", "get", "nightly")).toContain(
        "no target: no node image is offered",
      );

      // Killed before: the provider releases an image while the hub is down.
      e2e.hub().kill("SIGKILL");
      await writeFile(catalogueFile, catalogue(["2026.12.04"]));
      await e2e.startHub();
      const [first] = await completed(1);
      expect(first?.origin).toEqual({
        profile: "nightly",
        channel: "NodeImage",
        target: `${FAMILY} 2026.12.04`,
        createdBy: "hub",
      });
      await imagesAt("2026.12.04");

      // Killed after: an operator publishes an image; the hub dies as soon as the run exists.
      await e2e.ok("release", "add", "node-image", FAMILY, "2026.12.18");
      await waitFor(
        async () => ((await profileRuns()).length === 2 ? true : undefined),
        {
          timeoutMs: 20_000,
          intervalMs: 50,
          message: "the run of the released image",
        },
      );
      e2e.hub().kill("SIGKILL");
      await e2e.startHub();
      const runs = await completed(2);
      const second = runs.find((r) => r.name !== first?.name);
      expect(second?.origin?.target).toBe(`${FAMILY} 2026.12.18`);
      await imagesAt("2026.12.18");

      // Passes after the restart, and a release that changes nothing, make no third run.
      await e2e.ok("release", "add", "node-image", FAMILY, "2026.12.18");
      await e2e.ok(
        "autoupgradeprofile",
        "update",
        "nightly",
        "--node-image-selection",
        "Latest",
      );
      expect((await profileRuns()).length).toBe(2);
      expect(await e2e.ok("autoupgradeprofile", "get", "nightly")).toContain(
        `  Last run made:         ${second?.name ?? "?"}\n`,
      );

      expect(await e2e.ok("run", "status", second?.name ?? "")).toContain(
        `Created by auto-upgrade profile nightly (channel NodeImage, target ${FAMILY} 2026.12.18)`,
      );
      // The first run was made with no kill near it: both of the hub's records are there.
      const audit = JSON.parse(
        await e2e.ok(
          "audit",
          "list",
          "--target",
          first?.name ?? "",
          "-o",
          "json",
        ),
      ) as { events: { actor: string; method: string }[] };
      const byHub = audit.events.filter((e) => e.actor.startsWith("hub/"));
      expect(byHub.map((e) => e.method.replace(/^.*\//, ""))).toEqual([
        "AutoUpgradeCreateUpdateRun",
        "AutoUpgradeStartUpdateRun",
      ]);
    },
  );
});
