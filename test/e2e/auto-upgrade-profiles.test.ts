/**
 * Auto-upgrade profiles with real processes (nats-server, the hub, simulated agents, the flotilla
 * CLI): profiles written with flags and with an AKS file, listed, shown, changed and deleted;
 * every bad input refused with the field and the value, storing nothing; profiles kept in their
 * KV bucket across a hub killed and started again; the writes in the audit log.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

let e2e: E2E;
let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-aup-"));
  e2e = await startE2E();
  await e2e.startAgents(
    "fleet",
    fleetFile([clusters("node-", 2, { env: "prod" })]),
  );
  await e2e.connected(2);
});

afterEach(async () => {
  await e2e.stop();
  await rm(work, { recursive: true, force: true });
});

interface ListedProfile {
  name: string;
  spec: { channel: string; strategy: string; disabled: boolean };
}

async function listed(): Promise<ListedProfile[]> {
  const out = await e2e.ok("autoupgradeprofile", "list", "-o", "json");
  return (JSON.parse(out) as { profiles: ListedProfile[] }).profiles;
}

describe("auto-upgrade profiles, end to end", () => {
  it("are created, shown, changed and deleted through the CLI, and kept across a hub restart", async () => {
    const strategy = join(work, "strategy.json");
    await writeFile(
      strategy,
      JSON.stringify({
        stages: [{ name: "all", memberSelector: { byLabel: "env=prod" } }],
      }),
    );
    await e2e.ok("strategy", "create", "rings", "-f", strategy);

    const created = await e2e.ok(
      "autoupgradeprofile",
      "create",
      "nightly",
      "--channel",
      "NodeImage",
      "--update-strategy-name",
      "rings",
      "--disabled",
      "--reason",
      "weekly images",
    );
    expect(created).toContain("Auto-upgrade profile nightly created (revision");
    const file = join(work, "lts.yaml");
    await writeFile(
      file,
      [
        "name: lts",
        "properties:",
        "  channel: TargetKubernetesVersion",
        "  targetKubernetesVersion: '1.29'",
        "  longTermSupport: true",
        "  updateStrategyId: /subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/fleets/f/updateStrategies/rings",
        "",
      ].join("\n"),
    );
    await e2e.ok("autoupgradeprofile", "create", "lts", "-f", file);
    expect(await listed()).toEqual([
      expect.objectContaining({
        name: "lts",
        spec: expect.objectContaining({
          channel: "TargetKubernetesVersion",
          strategy: "rings",
        }) as unknown,
      }),
      expect.objectContaining({
        name: "nightly",
        spec: expect.objectContaining({
          channel: "NodeImage",
          disabled: true,
        }) as unknown,
      }),
    ]);

    await e2e.ok("autoupgradeprofile", "update", "nightly", "--enabled");
    const shown = await e2e.ok("autoupgradeprofile", "get", "nightly");
    expect(shown).toContain("  Channel:               NodeImage\n");
    expect(shown).toContain("  Update strategy:       rings\n");
    expect(shown).not.toContain("disabled");

    // The profiles live in their own KV bucket: a hub killed and started again still has them.
    e2e.hub().kill("SIGKILL");
    await e2e.startHub();
    expect((await listed()).map((p) => [p.name, p.spec.disabled])).toEqual([
      ["lts", false],
      ["nightly", false],
    ]);

    await e2e.ok("autoupgradeprofile", "delete", "lts");
    expect((await listed()).map((p) => p.name)).toEqual(["nightly"]);
    const audit = await e2e.ok(
      "audit",
      "list",
      "--target-kind",
      "AutoUpgradeProfile",
      "-o",
      "json",
    );
    const methods = (
      JSON.parse(audit) as { events: { method: string; targetName: string }[] }
    ).events.map((e) => `${e.method.replace(/^.*\//, "")} ${e.targetName}`);
    expect(methods).toEqual([
      "CreateAutoUpgradeProfile nightly",
      "CreateAutoUpgradeProfile lts",
      "UpdateAutoUpgradeProfile nightly",
      "DeleteAutoUpgradeProfile lts",
    ]);
  }, 90_000);

  it("refuses bad profiles with the field and the value, storing nothing", async () => {
    const cases: [string[], RegExp][] = [
      [
        ["--channel", "Rapid", "--update-strategy-name", "ghost"],
        /strategy: names no stored update strategy .*\(got "ghost"\)/,
      ],
      [
        ["--channel", "Rapid", "--long-term-support"],
        /longTermSupport: is only allowed with channel TargetKubernetesVersion \(channel is Rapid\)/,
      ],
      [
        ["--channel", "Stable", "--target-kubernetes-version", "1.30"],
        /targetKubernetesVersion: is only allowed with channel TargetKubernetesVersion .*\(got "1\.30"\)/,
      ],
      [
        [
          "--channel",
          "TargetKubernetesVersion",
          "--target-kubernetes-version",
          "1.30.x",
        ],
        /targetKubernetesVersion: must be a minor version like "1\.30".*\(got "1\.30\.x"\)/,
      ],
      [["--channel", "Weekly"], /channel: must be one of .*\(got "Weekly"\)/],
    ];
    for (const [flags, message] of cases) {
      const result = await e2e.cli(
        "autoupgradeprofile",
        "create",
        "p",
        ...flags,
      );
      expect(result.code, flags.join(" ")).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    const badName = await e2e.cli(
      "autoupgradeprofile",
      "create",
      "Bad_Name",
      "--channel",
      "Rapid",
    );
    expect(badName.code).toBe(2);
    expect(badName.stderr).toMatch(
      /name: must be a DNS label .*\(got "Bad_Name"\)/,
    );
    expect(await listed()).toEqual([]);
  }, 60_000);
});
