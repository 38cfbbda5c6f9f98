/**
 * The auto-upgrade trigger on two hub replicas (docs/high-availability.md#auto-upgrade-unit), real
 * processes: one replica holds the `auto-upgrade` lease; an operator publishes a node image through
 * the other, and the holder is SIGKILLed at once. Whether it made the run or not, the survivor takes
 * the lease and the fleet ends with exactly one run of the image, started and completed.
 */
import { waitFor } from "@flotilla/testkit";
import type { wire } from "@flotilla/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

const FAMILY = "ubuntu-22.04";
let e2e: E2E;

beforeEach(async () => {
  e2e = await startE2E({ replicas: 2, leaseTtl: "2s" });
  await e2e.startAgents(
    "fleet",
    fleetFile([clusters("node-", 3, { env: "prod" })]),
  );
  await e2e.connected(3);
}, 60_000);

afterEach(async () => {
  await e2e.stop();
}, 30_000);

/** The index of the replica holding `auto-upgrade`, as `hub status` shows it. */
async function holder(): Promise<number> {
  const found = await waitFor(
    async () => {
      const status = JSON.parse(
        await e2e.ok("hub", "status", "-o", "json"),
      ) as {
        replicas: { id: string; leases: string[] }[];
      };
      const found = status.replicas.find((r) =>
        r.leases.includes("auto-upgrade"),
      );
      return found;
    },
    { timeoutMs: 15_000, message: "a replica holding auto-upgrade" },
  );
  return Number(found.id.replace(/^hub-/, ""));
}

describe("the auto-upgrade trigger on replicas", () => {
  it(
    "makes exactly one run when the lease holder is killed as the image is released",
    { timeout: 120_000 },
    async () => {
      await e2e.ok(
        "autoupgradeprofile",
        "create",
        "nightly",
        "--channel",
        "NodeImage",
      );
      const owner = await holder();
      const survivor = (owner + 1) % 2;
      e2e.useHub(survivor);
      await e2e.ok("release", "add", "node-image", FAMILY, "2026.12.04");
      e2e.hub(owner).kill("SIGKILL");

      const runs = await waitFor(
        async () => {
          const out = await e2e.ok("run", "list", "-o", "json");
          const all = (
            JSON.parse(out) as { runs: wire.RunSummary__Output[] }
          ).runs.filter((r) => r.origin?.profile === "nightly");
          return all.length > 0 &&
            all.every((r) => r.state === "RUN_STATE_COMPLETED")
            ? all
            : undefined;
        },
        {
          timeoutMs: 40_000,
          intervalMs: 250,
          message: "the profile's run to complete on the survivor",
        },
      );
      expect(runs.map((r) => r.origin?.target)).toEqual([
        `${FAMILY} 2026.12.04`,
      ]);
      expect(await holder()).toBe(survivor);
      // A pass on the survivor finds the run made: no second one.
      await e2e.ok(
        "autoupgradeprofile",
        "update",
        "nightly",
        "--node-image-selection",
        "Consistent",
      );
      const again = JSON.parse(await e2e.ok("run", "list", "-o", "json")) as {
        runs: wire.RunSummary__Output[];
      };
      expect(
        again.runs.filter((r) => r.origin?.profile === "nightly"),
      ).toHaveLength(1);
    },
  );
});
