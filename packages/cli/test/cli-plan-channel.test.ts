/**
 * `flotilla plan --channel` through the built binary with examples/auto-upgrade-channels: the
 * target each channel resolves to with the catalogue, then which members upgrade, skip or fail and
 * why; bad flags and files are exit code 2 with the flag or the file and field path.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBuiltCli } from "./built-cli.js";

const dir = fileURLToPath(
  new URL("../../../examples/auto-upgrade-channels/", import.meta.url),
);
const planChannel = (...flags: string[]) =>
  runBuiltCli([
    "plan",
    "--clusters",
    `${dir}clusters.yaml`,
    "--strategy",
    `${dir}strategy.json`,
    "--catalogue",
    `${dir}catalogue.yaml`,
    ...flags,
  ]);

interface ChannelPlan {
  profile: Record<string, unknown>;
  upgrade?: { type: string; kubernetesVersion?: string };
  reason?: string;
  channels: {
    channel: string;
    upgrade?: { kubernetesVersion?: string };
    reason?: string;
  }[];
  plan?: {
    members: {
      name: string;
      wave: string;
      action: string;
      reason?: string;
      kubernetesVersion?: string;
    }[];
  };
  warnings: { code: string; message: string }[];
}

const json = async (...flags: string[]): Promise<ChannelPlan> => {
  const { code, stdout, stderr } = await planChannel(...flags, "-o", "json");
  expect(stderr).toBe("");
  expect(code).toBe(0);
  return JSON.parse(stdout) as ChannelPlan;
};

describe("flotilla plan --channel", () => {
  it("Rapid: the newest GA patch of the newest GA minor (the preview 1.33.0 is not N); members one minor behind upgrade, two behind skip", async () => {
    const out = await json("--channel", "Rapid");
    expect(out.upgrade).toEqual({
      type: "Full",
      kubernetesVersion: "1.32.2",
      nodeImageSelection: "Latest",
    });
    expect(
      out.plan?.members.map((m) => [
        m.name,
        m.wave,
        m.action,
        m.reason ?? m.kubernetesVersion,
      ]),
    ).toEqual([
      ["canary-01", "canary", "upgrade", "1.32.2"],
      ["prod-01", "prod", "upgrade", "1.32.2"],
      ["prod-02", "prod", "upgrade", "1.32.2"],
      ["prod-03", "prod", "upgrade", "1.32.2"],
      ["prod-04", "prod", "skip", "MinorVersionSkew"],
      ["legacy-01", "legacy", "skip", "MinorVersionSkew"],
      ["legacy-02", "legacy", "skip", "MinorVersionSkew"],
      ["legacy-03", "legacy", "skip", "MinorVersionSkew"],
    ]);
  });

  it("prints the channels, the profile's target and the members for people", async () => {
    const { code, stdout } = await planChannel("--channel", "Stable");
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        "Auto-upgrade channel Stable: Full upgrade to 1.31.6, node images Latest",
        "",
        "Channels with this catalogue:",
        "  Rapid          Full upgrade to 1.32.2, node images Latest",
        "  Stable         Full upgrade to 1.31.6, node images Latest  ← this profile",
        "  NodeImage      node-image upgrade, node images Latest",
        "  SecurityPatch  security-patch upgrade, node images Latest",
        "",
        "Targets (Full upgrade to 1.31.6, node images Latest):",
        "  → 1.31.6, system 202603.01.0 (5): canary-01, prod-01, prod-02, prod-03,",
        "    prod-04",
        "  skip (MinorVersionSkew) (3): legacy-01, legacy-02, legacy-03",
        "",
      ].join("\n"),
    );
  });

  it("TargetKubernetesVersion older than standard support needs --long-term-support: without it nothing is planned and the reason is given", async () => {
    const out = await json(
      "--channel",
      "TargetKubernetesVersion",
      "--target-kubernetes-version",
      "1.29",
    );
    expect(out.upgrade).toBeUndefined();
    expect(out.reason).toBe(
      "1.29 is older than standard support (1.30–1.32): set longTermSupport: true to follow an LTS minor",
    );
    const { stdout } = await planChannel(
      "--channel",
      "TargetKubernetesVersion",
      "--target-kubernetes-version",
      "1.29",
    );
    expect(stdout).toContain(
      "Auto-upgrade channel TargetKubernetesVersion 1.29: no upgrade: 1.29 is older\n",
    );
  });

  it("TargetKubernetesVersion with --long-term-support: the newest LTS patch; a cluster without the LTS plan would fail the run", async () => {
    const out = await json(
      "--channel",
      "TargetKubernetesVersion",
      "--target-kubernetes-version",
      "1.29",
      "--long-term-support",
    );
    expect(out.profile).toEqual({
      channel: "TargetKubernetesVersion",
      targetKubernetesVersion: "1.29",
      longTermSupport: true,
      nodeImageSelection: "Latest",
    });
    expect(out.upgrade?.kubernetesVersion).toBe("1.29.13");
    expect(
      out.plan?.members
        .filter((m) => m.wave === "legacy")
        .map((m) => [m.name, m.action, m.reason ?? m.kubernetesVersion]),
    ).toEqual([
      ["legacy-01", "upgrade", "1.29.13"],
      ["legacy-02", "upgrade", "1.29.13"],
      ["legacy-03", "fail", "NoLongTermSupport"],
    ]);
    expect(out.warnings.map((w) => w.code)).toEqual([
      "LongTermSupportRequired",
    ]);
  });
});

describe("flotilla plan --channel with bad input", () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "flotilla-channel-"));
    await writeFile(
      join(work, "cat.yaml"),
      'kubernetes:\n  - { version: "1.30" }\n  - { version: "1.31.2", prevew: true }\n',
    );
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it("a bad catalogue: exit 2, one line per problem naming the file and field path", async () => {
    const { code, stdout, stderr } = await runBuiltCli(
      [
        "plan",
        "--clusters",
        `${dir}clusters.yaml`,
        "--catalogue",
        "cat.yaml",
        "--channel",
        "Rapid",
      ],
      { cwd: work },
    );
    expect(stdout).toBe("");
    expect(code).toBe(2);
    expect(stderr).toBe(
      [
        'cat.yaml: kubernetes[0].version: must be a version like "1.30.5": the patch number is required (got "1.30")',
        'cat.yaml: kubernetes[1].prevew: unknown field; did you mean "preview"?',
        "",
      ].join("\n"),
    );
  });

  it("a profile flag that does not fit the channel names the flag", async () => {
    const missing = await planChannel("--channel", "TargetKubernetesVersion");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      'flotilla: plan: --target-kubernetes-version: is required for channel TargetKubernetesVersion ("major.minor", e.g. "1.30")\n',
    );
    const patch = await planChannel(
      "--channel",
      "TargetKubernetesVersion",
      "--target-kubernetes-version",
      "1.29.13",
    );
    expect(patch.stderr).toBe(
      'flotilla: plan: --target-kubernetes-version: must be a minor version like "1.30": "{major}.{minor}" without a patch (got "1.29.13")\n',
    );
    const unknown = await planChannel("--channel", "Fast");
    expect(unknown.stderr).toBe(
      'flotilla: plan: --channel: must be one of "Rapid", "Stable", "TargetKubernetesVersion", "NodeImage", "SecurityPatch" (got "Fast")\n',
    );
    const lts = await planChannel("--channel", "Rapid", "--long-term-support");
    expect(lts.stderr).toBe(
      "flotilla: plan: --long-term-support: is only allowed with channel TargetKubernetesVersion (channel is Rapid) (got true)\n",
    );
  });

  it("channel options without --channel, --channel without --catalogue, and plan without --strategy or --channel are usage errors", async () => {
    const noChannel = await planChannel();
    expect(noChannel.code).toBe(2);
    expect(noChannel.stderr).toMatch(
      /^flotilla: plan: --catalogue only goes with --channel\n\nUsage: flotilla plan /,
    );
    const noCatalogue = await runBuiltCli([
      "plan",
      "--clusters",
      `${dir}clusters.yaml`,
      "--channel",
      "Rapid",
    ]);
    expect(noCatalogue.code).toBe(2);
    expect(noCatalogue.stderr).toMatch(
      /^flotilla: plan: --channel needs --catalogue FILE \(what the platform offers\)\n/,
    );
    const neither = await runBuiltCli([
      "plan",
      "--clusters",
      `${dir}clusters.yaml`,
    ]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(
      /^flotilla: plan: missing required option --strategy\n/,
    );
  });
});
