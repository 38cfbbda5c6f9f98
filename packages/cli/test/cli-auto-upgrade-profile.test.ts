/**
 * `flotilla autoupgradeprofile …` against a fake hub: the spec sent from flags and from an AKS
 * file (flags win, `{properties}` unwrapped, updateStrategyId resource IDs reduced to the name),
 * bad input refused locally with the field and nothing sent, `update` keeping unnamed fields, the
 * printed answers, generate-run, and the origin line of `run status`.
 */
import { FlotillaError } from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { memoryIo, NOW_MS } from "./fixtures.js";

function profile(
  spec: Partial<wire.AutoUpgradeProfileSpec> = {},
  overrides: Partial<wire.AutoUpgradeProfile> = {},
): wire.AutoUpgradeProfile {
  return {
    name: "images",
    spec: {
      channel: "NodeImage",
      strategy: "",
      nodeImageSelection: "Latest",
      disabled: false,
      ...spec,
    },
    createdAtMs: NOW_MS - 3_600_000,
    updatedAtMs: NOW_MS - 60_000,
    revision: 4,
    current: {
      description: "AKSUbuntu-2204gen2 202603.08.0",
      run: "images-img-0a1b2c3d",
      skipReason: "",
      waitingFor: "",
    },
    lastRun: "images-img-99999999",
    ...overrides,
  };
}

const AKS_FILE = `
name: images
properties:
  channel: NodeImage
  updateStrategyId: /subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/fleets/f/updateStrategies/rings
  nodeImageSelection:
    type: Consistent
  disabled: true
`;

describe("flotilla autoupgradeprofile", () => {
  it("creates a profile from an AKS file with flags on top", async () => {
    await using hub = await startFakeHub({
      unary: {
        CreateAutoUpgradeProfile: (req) => ({
          profile: profile(req.spec ?? {}, { revision: 1, lastRun: "" }),
        }),
      },
    });
    const io = memoryIo({ "p.yaml": AKS_FILE });
    const { code, out, err } = await cliAgainst(
      hub,
      [
        "autoupgradeprofile",
        "create",
        "images",
        "-f",
        "p.yaml",
        "--reason",
        "weekly images",
      ],
      io,
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(hub.requests("CreateAutoUpgradeProfile")).toEqual([
      {
        name: "images",
        spec: {
          channel: "NodeImage",
          strategy: "rings",
          nodeImageSelection: "Consistent",
          disabled: true,
        },
        reason: "weekly images",
      },
    ]);
    expect(out).toContain(
      "Auto-upgrade profile images created (revision 1) · disabled\n",
    );
    expect(out).toContain("  Update strategy:       rings\n");
    expect(out).toContain(
      "  Now:                   AKSUbuntu-2204gen2 202603.08.0 → run images-img-0a1b2c3d\n",
    );
  });

  it.each([
    [
      ["--channel", "Rapid", "--long-term-support"],
      "longTermSupport: is only allowed with channel TargetKubernetesVersion (channel is Rapid)",
    ],
    [
      ["--channel", "Stable", "--target-kubernetes-version", "1.30"],
      "targetKubernetesVersion: is only allowed with channel TargetKubernetesVersion",
    ],
    [
      [
        "--channel",
        "TargetKubernetesVersion",
        "--target-kubernetes-version",
        "1.30.x",
      ],
      'targetKubernetesVersion: must be a minor version like "1.30"',
    ],
    [["--channel", "Weekly"], 'channel: must be one of "Rapid"'],
  ])(
    "refuses %j before calling the hub, naming the field (exit 2)",
    async (flags, message) => {
      await using hub = await startFakeHub({});
      const { code, err } = await cliAgainst(hub, [
        "autoupgradeprofile",
        "create",
        "p",
        ...flags,
      ]);
      expect(code).toBe(2);
      expect(err).toContain(message);
      expect(hub.calls).toEqual([]);
    },
  );

  it("a strategy flag replaces the file's updateStrategyId; --strategy and --update-strategy-name must agree", async () => {
    await using hub = await startFakeHub({
      unary: {
        CreateAutoUpgradeProfile: (req) => ({
          profile: profile(req.spec ?? {}),
        }),
      },
    });
    const io = memoryIo({ "p.yaml": AKS_FILE });
    const replaced = await cliAgainst(
      hub,
      [
        "autoupgradeprofile",
        "create",
        "images",
        "-f",
        "p.yaml",
        "--strategy",
        "canary",
      ],
      io,
    );
    expect(replaced.err).toBe("");
    expect(hub.requests("CreateAutoUpgradeProfile")[0]).toMatchObject({
      spec: { strategy: "canary" },
    });
    const clash = await cliAgainst(hub, [
      "autoupgradeprofile",
      "create",
      "images",
      "--channel",
      "Rapid",
      "--strategy",
      "a",
      "--update-strategy-name",
      "b",
    ]);
    expect(clash.code).toBe(2);
    expect(clash.err).toContain(
      '--strategy "a" and --update-strategy-name "b" disagree: give one of them',
    );
    expect(hub.requests("CreateAutoUpgradeProfile")).toHaveLength(1);
  });

  it("prints the hub's refusal of a missing strategy against the file", async () => {
    await using hub = await startFakeHub({
      unary: {
        CreateAutoUpgradeProfile: () => {
          throw FlotillaError.invalid("auto-upgrade profile", [
            {
              path: "spec.strategy",
              message:
                "names no stored update strategy (flotilla strategy list)",
              value: "rings",
            },
          ]);
        },
      },
    });
    const io = memoryIo({ "p.yaml": AKS_FILE });
    const { code, err } = await cliAgainst(
      hub,
      ["autoupgradeprofile", "create", "images", "-f", "p.yaml"],
      io,
    );
    expect(code).toBe(2);
    expect(err).toContain(
      'p.yaml: strategy: names no stored update strategy (flotilla strategy list) (got "rings")',
    );
  });

  it("update changes only the fields given, with the expected revision", async () => {
    await using hub = await startFakeHub({
      unary: {
        GetAutoUpgradeProfile: () => ({
          profile: profile({ strategy: "rings", disabled: true }),
        }),
        UpdateAutoUpgradeProfile: (req) => ({
          profile: profile(req.spec ?? {}),
        }),
      },
    });
    const { code, err } = await cliAgainst(hub, [
      "autoupgradeprofile",
      "update",
      "images",
      "--enabled",
      "--node-image-selection",
      "Consistent",
      "--expected-revision",
      "4",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(hub.requests("UpdateAutoUpgradeProfile")).toEqual([
      {
        name: "images",
        spec: {
          channel: "NodeImage",
          strategy: "rings",
          nodeImageSelection: "Consistent",
          disabled: false,
        },
        expectedRevision: 4,
        reason: "",
      },
    ]);
  });

  it("get shows the run the current target waits for", async () => {
    await using hub = await startFakeHub({
      unary: {
        GetAutoUpgradeProfile: () => ({
          profile: profile(
            {},
            {
              current: {
                description: "AKSUbuntu-2204gen2 202603.08.0",
                run: "images-img-0a1b2c3d",
                skipReason: "",
                waitingFor: "images-img-99999999",
              },
            },
          ),
        }),
      },
    });
    const { code, out } = await cliAgainst(hub, [
      "autoupgradeprofile",
      "get",
      "images",
    ]);
    expect(code).toBe(0);
    expect(out).toContain(
      "  Now:                   AKSUbuntu-2204gen2 202603.08.0 → run images-img-0a1b2c3d (waits for run images-img-99999999 to end)\n",
    );
  });

  it("lists profiles as a table and as JSON", async () => {
    const stored = [
      profile(),
      profile(
        {
          channel: "TargetKubernetesVersion",
          targetKubernetesVersion: "1.28",
          longTermSupport: true,
        },
        {
          name: "lts",
          current: {
            description: "",
            run: "",
            skipReason: "no GA patch of 1.28 is offered yet",
            waitingFor: "",
          },
          lastRun: "",
        },
      ),
    ];
    await using hub = await startFakeHub({
      unary: {
        ListAutoUpgradeProfiles: () => ({
          profiles: stored,
          nextPageToken: "",
        }),
      },
    });
    const table = await cliAgainst(hub, ["autoupgradeprofile", "list"]);
    expect(table.code).toBe(0);
    const lines = table.out.split("\n");
    expect(lines[0]).toMatch(
      /^NAME\s+CHANNEL\s+STRATEGY\s+IMAGES\s+ENABLED\s+NOW\s+LAST RUN\s+UPDATED$/,
    );
    expect(table.out).toContain("TargetKubernetesVersion 1.28 (LTS)");
    expect(table.out).toContain(
      "no target: no GA patch of 1.28 is offered yet",
    );
    const json = await cliAgainst(hub, [
      "autoupgradeprofile",
      "list",
      "-o",
      "json",
    ]);
    const parsed = JSON.parse(json.out) as { profiles: { name: string }[] };
    expect(parsed.profiles.map((p) => p.name)).toEqual(["images", "lts"]);
  });

  it("generate-run says whether the run was created or found", async () => {
    let created = true;
    await using hub = await startFakeHub({
      unary: {
        GenerateUpdateRun: () => {
          const answer: wire.GenerateUpdateRunResponse = {
            created,
            warnings: [],
            run: {
              name: "images-img-0a1b2c3d",
              state: "RUN_STATE_NOT_STARTED" as const,
              origin: {
                profile: "images",
                channel: "NodeImage",
                target: "AKSUbuntu-2204gen2 202603.08.0",
                createdBy: "generate",
              },
            },
          };
          created = false;
          return answer;
        },
      },
    });
    const first = await cliAgainst(hub, [
      "autoupgradeprofile",
      "generate-run",
      "images",
    ]);
    expect(first.out).toBe(
      "Run images-img-0a1b2c3d created from auto-upgrade profile images (target AKSUbuntu-2204gen2 202603.08.0); start it with: flotilla run start images-img-0a1b2c3d\n",
    );
    const again = await cliAgainst(hub, [
      "autoupgradeprofile",
      "generate-run",
      "images",
    ]);
    expect(again.out).toBe(
      "Run images-img-0a1b2c3d of auto-upgrade profile images (target AKSUbuntu-2204gen2 202603.08.0) exists already.\n",
    );
  });
});
