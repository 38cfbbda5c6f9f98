// The live demo (README's first command, via scripts/demo.sh): a real nats-server with JetStream,
// the hub, and 60 simulated clusters' agents in one process, each with its own gRPC stream and
// intent watcher. Then, through the `flotilla` CLI as an operator would type it:
//   (a) a Fleet-style bundle rolled out by partitions (canary, staging, prod);
//   (b) a Kubernetes upgrade as a staged update run canary → staging → prod, with an approval gate
//       that waits until the demo approves it, a cluster whose maintenance window is still closed
//       (Pending, finishing when the window opens) and a cluster whose upgrade fails (within the
//       prod group's failure budget);
//   (c) a NodeImage auto-upgrade profile: the demo, playing the provider, publishes a node image
//       in the agents' catalogue file, and the hub creates and starts the profile's run by itself.
// Secure as docs/security.md sets a fleet up: NATS in operator mode with per-agent credentials
// (`flotilla-hub nats-setup`), the hub on TLS with its own CA, the operator authenticated by an
// admin token, and agents that join with a bootstrap token from `flotilla token create`.
// Live progress on screen, a summary at the end, exit 0 when all three rollouts completed. Every
// process started here is stopped on the way out, whatever happens.
//
// With --ha (docs/high-availability.md): three nats-servers routed as one JetStream cluster and
// three hub replicas on it (`--jetstream-replicas 3`), agents given every replica's address, and
// in the middle of the staged run the replica that owns it is killed with SIGKILL; another takes
// the run over once its lease expires and the rollouts still complete. This mode runs in
// development mode (plaintext, no NATS accounts): docs/install.md sets up a secured cluster.
// @ts-check
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";

/** @import { RunView, wire } from "../packages/protocol/dist/index.js" */
/** @import { TestProcess } from "../packages/testkit/dist/index.js" */

const root = new URL("..", import.meta.url).pathname;
const ha = process.argv.includes("--ha");
const HUBS = 3;
/** The node images of act (c): what the pools run, and what the provider publishes mid-demo. */
const IMAGE_FAMILY = "ubuntu-22.04";
const IMAGE_BEFORE = "2026.11.20";
const IMAGE_RELEASED = "2026.12.04";
const PROFILE = "node-images";
const {
  startNatsServer,
  startNatsCluster,
  startProcess,
  runProcess,
  freePort,
} = /** @type {typeof import("../packages/testkit/dist/index.js")} */ (
  await import(`${root}packages/testkit/dist/index.js`)
);
const {
  createAdminServiceClient,
  callUnary,
  runFromWire,
  silenceIpServernameWarning,
} = /** @type {typeof import("../packages/protocol/dist/index.js")} */ (
  await import(`${root}packages/protocol/dist/index.js`)
);
// grpc-js is a dependency of the workspace packages, not of the repository root.
const { credentials, Metadata } =
  /** @type {typeof import("@grpc/grpc-js")} */ (
    await import(
      pathToFileURL(
        createRequire(`${root}packages/protocol/package.json`).resolve(
          "@grpc/grpc-js",
        ),
      ).href
    )
  );

silenceIpServernameWarning();
// isTTY is undefined, not false, when stdout is not a terminal (Node's types say boolean).
// eslint-disable-next-line @typescript-eslint/no-unnecessary-boolean-literal-compare
const tty = process.stdout.isTTY === true;
/** @param {string} s */
const bold = (s) => (tty ? `\x1b[1m${s}\x1b[0m` : s);
/** @param {string} s */
const dim = (s) => (tty ? `\x1b[2m${s}\x1b[0m` : s);
/** @param {string} s */
const green = (s) => (tty ? `\x1b[32m${s}\x1b[0m` : s);
/** @param {string} s */
const yellow = (s) => (tty ? `\x1b[33m${s}\x1b[0m` : s);
/** @param {string} s */
const red = (s) => (tty ? `\x1b[31m${s}\x1b[0m` : s);
const say = (s = "") => process.stdout.write(`${s}\n`);
const started = Date.now();
const elapsed = () =>
  `${String(Math.round((Date.now() - started) / 1000)).padStart(3)}s`;

/** @type {(() => Promise<unknown>)[]} */
const cleanup = [];
let exitCode = 1;

async function main() {
  const work = await mkdtemp(join(tmpdir(), "flotilla-demo-"));
  cleanup.push(() => rm(work, { recursive: true, force: true }));

  say(bold("flotilla live demo"));
  say(
    dim(
      ha
        ? "Starting 3 nats-servers (one JetStream cluster), 3 hub replicas and 60 simulated clusters…"
        : "Starting nats-server (JetStream), the hub and 60 simulated clusters…",
    ),
  );
  const setUp = ha ? await startHa() : await startSecure(work);
  const { natsUrls, hubAddresses, hubs } = setUp;
  /** Which replica the demo's admin client and CLI talk to. */
  let current = 0;
  let client = admin(hubAddresses[0] ?? "", setUp.channel);
  /** @param {number} index */
  const useHub = (index) => {
    client.close();
    current = index;
    client = admin(hubAddresses[index] ?? "", setUp.channel);
  };

  /**
   * Runs `flotilla ARGS…` against the demo's hub, showing the command and its output.
   * @param {string[]} args
   * @param {{ quiet?: boolean }} [options]
   * @returns {Promise<string>}
   */
  const cli = async (args, { quiet = false } = {}) => {
    const shown = args.map((a) => (/[\s"]/.test(a) ? JSON.stringify(a) : a));
    say(`${dim("$")} flotilla ${shown.join(" ")}`);
    const result = await runProcess({
      name: "flotilla",
      args: ["packages/cli/dist/main.js", ...args],
      env: { ...setUp.cliEnv, FLOTILLA_HUB: hubAddresses[current] ?? "" },
    });
    if (!quiet || result.code !== 0)
      process.stdout.write(indent(result.stdout));
    if (result.code !== 0)
      throw new Error(
        `flotilla ${args.join(" ")} exited ${String(result.code)}:\n${result.stderr}`,
      );
    return result.stdout;
  };

  // One bootstrap token for the 60 simulated clusters; each registers once and gets its own
  // certificate and NATS user, then the token is of no further use to it.
  /** @type {string[]} */
  let agentAuthArgs = ["--insecure-plaintext"];
  if (!ha) {
    say(dim("The agents join with a bootstrap token:"));
    const created = await cli([
      "token",
      "create",
      "--ttl",
      "10m",
      "--max-uses",
      "60",
      "--reason",
      "demo fleet",
    ]);
    const secret = /flotilla-bt\.\S+/.exec(created)?.[0];
    if (secret === undefined)
      throw new Error(
        `no token secret in the output of token create:\n${created}`,
      );
    const bootstrapTokenFile = join(work, "bootstrap.token");
    await writeFile(bootstrapTokenFile, `${secret}\n`, { mode: 0o600 });
    agentAuthArgs = [
      "--tls-ca",
      setUp.caFile,
      "--bootstrap-token-file",
      bootstrapTokenFile,
    ];
  }

  // prod-eu-03's owner allows Kubernetes upgrades only in a window that opens in an hour; the
  // demo plays the owner later and opens one early, by editing the file its agent watches.
  const windowsFile = join(work, "prod-eu-03-windows.json");
  /** @param {number} from */
  const openWindow = (from) =>
    writeFile(
      windowsFile,
      JSON.stringify({
        maintenance: {
          kubernetes: [
            {
              start: new Date(from).toISOString(),
              end: new Date(from + 3_600_000).toISOString(),
            },
          ],
        },
      }),
    );
  await openWindow(Date.now() + 3_600_000);
  // What the provider offers every cluster, from a file the agents re-read: act (c) "publishes" a
  // node image by rewriting it (docs/agent.md#the-version-catalogue).
  const catalogueFile = join(work, "catalogue.json");
  /** @param {string[]} images */
  const offerImages = (images) =>
    writeFile(
      catalogueFile,
      JSON.stringify({
        catalogue: {
          kubernetes: ["1.30.3"],
          nodeImages: { [IMAGE_FAMILY]: images },
        },
      }),
    );
  await offerImages([IMAGE_BEFORE]);
  const fleetFile = join(work, "fleet.json");
  await writeFile(
    fleetFile,
    JSON.stringify(simulatedFleet(windowsFile, catalogueFile), null, 2),
  );
  const agents = startProcess({
    name: "agents",
    args: [
      "packages/agent/dist/main.js",
      "--simulated-fleet",
      fleetFile,
      "--hub",
      hubAddresses.join(","),
      ...agentAuthArgs,
      "--nats",
      natsUrls.join(","),
      "--state-dir",
      join(work, "agents"),
      "--metrics-listen",
      "off",
      "--windows-reload-interval",
      "500ms",
      "--log-level",
      "warn",
    ],
  });
  cleanup.push(() => agents.stop());

  await waitUntil(
    async () => {
      if (await isExited(agents)) {
        endLine();
        throw Object.assign(
          new Error(`the agents exited:\n${agents.output()}`),
          { fatal: true },
        );
      }
      const { clusters } = await callUnary(client, "listClusters", {
        pageSize: 1000,
      });
      const connected = clusters.filter(
        (c) => c.connection === "CONNECTION_STATE_CONNECTED",
      ).length;
      line(`  ${bar(connected, 60)} ${String(connected)}/60 agents connected`);
      return connected === 60;
    },
    60_000,
    "60 agents to connect",
  );
  endLine();

  say();
  await cli(["cluster", "list", "-l", "env=canary"]);

  // (a) A bundle with a Fleet rolloutStrategy.
  say();
  say(
    bold(
      "(a) Rolling out bundle web-frontend with a Fleet rolloutStrategy (partitions canary → staging → prod)",
    ),
  );
  await cli([
    "bundle",
    "apply",
    "examples/live-demo/bundle",
    "--reason",
    "ship checkout-v2",
  ]);
  /** @type {wire.BundleCounts__Output | undefined} */
  let bundleCounts;
  await waitUntil(
    async () => {
      const { bundle } = await callUnary(client, "getBundle", {
        name: "web-frontend",
      });
      const counts = /** @type {wire.BundleCounts__Output} */ (
        /** @type {wire.Bundle__Output} */ (bundle).counts
      );
      bundleCounts = counts;
      const ready = counts.ready ?? 0;
      line(
        `  ${elapsed()} ${bar(ready, counts.targets)} ${String(ready)}/${String(counts.targets)} Ready  ${dim(`waitApplied ${String(counts.waitApplied ?? 0)}, notReady ${String(counts.notReady ?? 0)}, pending ${String(counts.pending ?? 0)}`)}`,
      );
      return counts.targets === 60 && ready === 60;
    },
    120_000,
    "the bundle to be Ready everywhere",
  );
  endLine();
  await cli(["bundle", "get", "web-frontend"], { quiet: true });
  say(green("  web-frontend is Ready on all 60 clusters"));

  // (b) A staged Kubernetes upgrade.
  say();
  say(
    bold(
      "(b) Upgrading Kubernetes to 1.30.3 as a staged update run: canary → staging → prod",
    ),
  );
  await cli([
    "strategy",
    "create",
    "rings",
    "-f",
    "examples/live-demo/strategy.json",
    "--reason",
    "demo rings",
  ]);
  await cli([
    "run",
    "create",
    "k8s-1-30",
    "--strategy",
    "rings",
    "--kubernetes-version",
    "1.30.3",
    "--reason",
    "monthly upgrade",
  ]);
  await cli(["run", "start", "k8s-1-30", "--reason", "change CHG-1042"]);

  let approved = false;
  let sawWindowPending = false;
  let pendingSince = 0;
  let windowOpened = false;
  /** @type {{ index: number, epoch: number } | undefined} */
  let killed;
  let killedAtMs = 0;
  /** @type {{ index: number, epoch: number } | undefined} */
  let takeover;
  /** @type {RunView | undefined} */
  let final;
  await waitUntil(
    async () => {
      const { run: wireRun } = await callUnary(client, "getUpdateRun", {
        name: "k8s-1-30",
      });
      const run = runFromWire(/** @type {wire.RunStatus__Output} */ (wireRun));
      if (!run.ok) throw new Error(JSON.stringify(run.problems));
      const view = run.value;
      const members = view.stages.flatMap((s) =>
        s.groups.flatMap((g) => g.members),
      );
      const windowMember = members.find((m) => m.name === "prod-eu-03");
      if (windowMember?.state === "Pending" && !sawWindowPending) {
        sawWindowPending = true;
        pendingSince = Date.now();
        endLine();
        say(
          yellow(
            `  ${elapsed()} prod-eu-03 is Pending: ${windowMember.message}`,
          ),
        );
      }
      // The owner opens the window once the rest of prod is well under way.
      const prodDone = members.filter(
        (m) =>
          m.name.startsWith("prod-") &&
          m.state !== "NotStarted" &&
          m.state !== "Pending",
      ).length;
      // --ha: once prod is under way, the replica that owns the run is killed.
      if (ha && approved && killed === undefined && prodDone >= 10) {
        const owner = ownerOf(hubs, "k8s-1-30");
        if (owner !== undefined) {
          useHub((owner.index + 1) % HUBS);
          hubs[owner.index]?.kill("SIGKILL");
          killed = owner;
          killedAtMs = Date.now();
          endLine();
          say(
            red(
              `  ${elapsed()} hub-${String(owner.index)} owns k8s-1-30 (lease epoch ${String(owner.epoch)}): killed with SIGKILL. Its agents move to the other replicas; another takes the run over when the lease expires`,
            ),
          );
          return false;
        }
      }
      if (killed !== undefined && takeover === undefined) {
        const now = ownerOf(hubs, "k8s-1-30");
        if (now !== undefined && now.epoch > killed.epoch) {
          takeover = now;
          endLine();
          say(
            green(
              `  ${elapsed()} hub-${String(now.index)} took k8s-1-30 over (lease epoch ${String(now.epoch)}), ${((Date.now() - killedAtMs) / 1000).toFixed(1)} s after the kill`,
            ),
          );
          // What an operator checks then: the replicas left and what each holds, and the audit record.
          await cli(["hub", "status"]);
          await cli([
            "audit",
            "list",
            "--method",
            "/flotilla.hub/TakeOverUpdateRun",
          ]);
        }
      }
      if (
        sawWindowPending &&
        !windowOpened &&
        Date.now() - pendingSince > 8_000 &&
        prodDone >= 30
      ) {
        windowOpened = true;
        await openWindow(Date.now() - 60_000);
        endLine();
        say(
          yellow(
            `  ${elapsed()} prod-eu-03's owner opens a maintenance window now (edits the windows file its agent watches)`,
          ),
        );
      }
      const gate = view.stages
        .flatMap((s) => s.afterGates)
        .find((g) => g.state === "Pending");
      if (gate !== undefined && !approved) {
        endLine();
        say(
          yellow(
            `  ${elapsed()} gate "${gate.displayName}" (${gate.id}) is Pending: the run waits for an approval`,
          ),
        );
        await cli(["run", "status", "k8s-1-30"]);
        await cli([
          "run",
          "approve",
          "k8s-1-30",
          gate.id,
          "--reason",
          "canaries healthy",
        ]);
        approved = true;
        return false;
      }
      line(`  ${elapsed()} ${stageBars(view)}`);
      if (["Completed", "Failed", "Stopped"].includes(view.state)) {
        final = view;
        return true;
      }
      return false;
    },
    300_000,
    "the update run to finish",
  );
  endLine();
  say();
  await cli(["run", "status", "k8s-1-30"]);

  // (c) Upgrades that happen by themselves: a NodeImage auto-upgrade profile.
  say();
  say(
    bold(
      "(c) A NodeImage auto-upgrade profile: the provider publishes a node image, the hub starts the run by itself",
    ),
  );
  await cli([
    "strategy",
    "create",
    "image-waves",
    "-f",
    "examples/live-demo/node-image-strategy.json",
    "--reason",
    "node image waves",
  ]);
  await cli([
    "autoupgradeprofile",
    "create",
    PROFILE,
    "--channel",
    "NodeImage",
    "--strategy",
    "image-waves",
    "--reason",
    "keep node images current",
  ]);
  await offerImages([IMAGE_BEFORE, IMAGE_RELEASED]);
  say(
    yellow(
      `  ${elapsed()} the provider publishes node image ${IMAGE_FAMILY} ${IMAGE_RELEASED} (the agents' catalogue file changes; nobody touches the hub)`,
    ),
  );
  /** @type {string} */
  let autoRun = "";
  await waitUntil(
    async () => {
      const { profile } = await callUnary(client, "getAutoUpgradeProfile", {
        name: PROFILE,
      });
      autoRun = profile?.lastRun ?? "";
      line(
        `  ${elapsed()} waiting for the profile: ${profile?.current?.description || profile?.current?.skipReason || "…"}`,
      );
      return autoRun !== "";
    },
    60_000,
    `auto-upgrade profile ${PROFILE} to start a run`,
  );
  endLine();
  say(
    green(
      `  ${elapsed()} profile ${PROFILE} created and started run ${autoRun}, with strategy image-waves`,
    ),
  );
  /** @type {RunView | undefined} */
  let imageRun;
  await waitUntil(
    async () => {
      const { run: wireRun } = await callUnary(client, "getUpdateRun", {
        name: autoRun,
      });
      const run = runFromWire(/** @type {wire.RunStatus__Output} */ (wireRun));
      if (!run.ok) throw new Error(JSON.stringify(run.problems));
      line(`  ${elapsed()} ${stageBars(run.value)}`);
      if (["Completed", "Failed", "Stopped"].includes(run.value.state)) {
        imageRun = run.value;
        return true;
      }
      return false;
    },
    120_000,
    `run ${autoRun} to finish`,
  );
  endLine();
  await cli(["versions", "--cluster", "canary-eu-01"]);

  // Summary.
  if (final === undefined) throw new Error("the update run did not finish");
  const members = final.stages.flatMap((s) =>
    s.groups.flatMap((g) => g.members),
  );
  /** @param {string} state */
  const count = (state) => members.filter((m) => m.state === state).length;
  say();
  say(bold("Summary"));
  say(
    `  bundle web-frontend   ${green("Ready")} on ${String(bundleCounts?.ready)}/${String(bundleCounts?.targets)} clusters`,
  );
  say(
    `  run k8s-1-30          ${final.state === "Completed" ? green(final.state) : red(final.state)}: ${String(count("Succeeded"))} succeeded, ${String(count("Failed"))} failed (within budget), ${String(count("Skipped"))} skipped, ${String(members.length)} members`,
  );
  say(`  approval gate         approved by the demo through the CLI`);
  const imageMembers =
    imageRun?.stages.flatMap((s) => s.groups.flatMap((g) => g.members)) ?? [];
  /** @param {string} state */
  const imageCount = (state) =>
    imageMembers.filter((m) => m.state === state).length;
  say(
    `  auto-upgrade          profile ${PROFILE} (NodeImage) made run ${autoRun} when ${IMAGE_RELEASED} appeared: ${imageRun?.state === "Completed" ? green("Completed") : red(String(imageRun?.state))}, ${String(imageCount("Succeeded"))} clusters moved to the new image, ${String(imageCount("Failed"))} failed (within budget)`,
  );
  say(
    `  maintenance window    prod-eu-03 ${sawWindowPending ? "waited Pending until its owner opened a window, then upgraded" : "was never held by its window"}`,
  );
  if (ha) {
    say(
      `  high availability     3 NATS servers (JetStream R3), 3 hub replicas; hub-${String(killed?.index)} was killed mid-run and hub-${String(takeover?.index)} finished the run (lease epoch ${String(killed?.epoch)} → ${String(takeover?.epoch)})`,
    );
  } else {
    const { tokens } = await callUnary(client, "listBootstrapTokens", {});
    const registered = tokens.reduce((n, t) => n + t.uses, 0);
    say(
      `  security              ${String(registered)} agents registered with one bootstrap token, each with its own certificate (mTLS) and NATS user; the CLI acted as token:demo`,
    );
  }
  say(`  took ${elapsed().trim()}`);
  if (
    final.state !== "Completed" ||
    !sawWindowPending ||
    !windowOpened ||
    count("Failed") !== 1 ||
    imageRun?.state !== "Completed" ||
    imageCount("Succeeded") < 50 ||
    (ha && (killed === undefined || takeover === undefined))
  ) {
    throw new Error("the demo did not go as planned (see above)");
  }
  exitCode = 0;
}

/**
 * @typedef {object} SetUp
 * @property {readonly string[]} natsUrls
 * @property {readonly string[]} hubAddresses
 * @property {TestProcess[]} hubs
 * @property {import("@grpc/grpc-js").ChannelCredentials} channel
 * @property {Record<string, string>} cliEnv
 * @property {string} caFile
 */

/**
 * Secured as docs/security.md sets a fleet up: NATS in operator mode, one hub on TLS with its CA,
 * the operator's admin token.
 * @param {string} work
 * @returns {Promise<SetUp>}
 */
async function startSecure(work) {
  // NATS in operator mode: agents live in an account of their own; the hub gives each agent a
  // user that may read its own cluster's intent and sealed bundle content, and nothing else.
  const natsDir = join(work, "nats");
  const setup = await runProcess({
    name: "nats-setup",
    args: [
      "packages/hub/dist/main.js",
      "nats-setup",
      "--out",
      natsDir,
      "--resolver-dir",
      join(work, "nats-jwt"),
    ],
  });
  if (setup.code !== 0)
    throw new Error(`flotilla-hub nats-setup failed:\n${setup.stderr}`);
  const nats = await startNatsServer({
    config: await readFile(join(natsDir, "nats-auth.conf"), "utf8"),
  });
  cleanup.push(() => nats.stop());

  // The operator's admin token: the hub keeps its digest, the CLI reads the token from a file.
  const adminToken = randomBytes(24).toString("base64url");
  const tokenFile = join(work, "admin.token");
  await writeFile(tokenFile, `${adminToken}\n`, { mode: 0o600 });
  const adminTokensFile = join(work, "admin-tokens.yaml");
  await writeFile(
    adminTokensFile,
    `- name: demo\n  role: admin\n  tokenSha256: "${createHash("sha256").update(adminToken).digest("hex")}"\n`,
    { mode: 0o600 },
  );
  const caFile = join(work, "hub-ca.pem");

  const hubAddress = `127.0.0.1:${String(await freePort())}`;
  const hub = startProcess({
    name: "hub",
    args: [
      "packages/hub/dist/main.js",
      "--listen",
      hubAddress,
      "--http-listen",
      "off",
      "--nats",
      nats.url,
      "--nats-auth-dir",
      natsDir,
      "--admin-tokens",
      adminTokensFile,
      "--write-ca",
      caFile,
      "--heartbeat-interval",
      "2s",
      "--pass-interval",
      "1s",
      "--log-level",
      "warn",
    ],
  });
  cleanup.push(() => hub.stop());
  await hub.waitForLine(/serving gRPC/, 30_000);
  return {
    natsUrls: [nats.url],
    hubAddresses: [hubAddress],
    hubs: [hub],
    channel: await adminCredentials(caFile, adminToken),
    cliEnv: { FLOTILLA_TLS_CA: caFile, FLOTILLA_TOKEN_FILE: tokenFile },
    caFile,
  };
}

/**
 * Three nats-servers routed as one JetStream cluster and three hub replicas on it, in development
 * mode (plaintext; the CLI names itself `demo`).
 * @returns {Promise<SetUp>}
 */
async function startHa() {
  const cluster = await startNatsCluster({ nodes: 3 });
  cleanup.push(() => cluster.stop());
  /** @type {string[]} */
  const hubAddresses = [];
  for (let i = 0; i < HUBS; i++) {
    hubAddresses.push(`127.0.0.1:${String(await freePort())}`);
  }
  // One after the other: the first creates the buckets (three copies each), the others find them.
  /** @type {TestProcess[]} */
  const hubs = [];
  for (const [i, address] of hubAddresses.entries()) {
    const hub = startProcess({
      name: `hub-${String(i)}`,
      args: [
        "packages/hub/dist/main.js",
        "--insecure-plaintext",
        "--replica-id",
        `hub-${String(i)}`,
        "--listen",
        address,
        "--http-listen",
        "off",
        "--nats",
        cluster.urls.join(","),
        "--jetstream-replicas",
        "3",
        "--lease-ttl",
        "5s",
        "--heartbeat-interval",
        "2s",
        "--pass-interval",
        "1s",
        // Info: the demo reads which replica took the run over from the log.
        "--log-level",
        "info",
      ],
    });
    cleanup.push(() => hub.stop());
    hubs.push(hub);
    await hub.waitForLine(/serving gRPC/, 60_000);
  }
  return {
    natsUrls: cluster.urls,
    hubAddresses,
    hubs,
    channel: credentials.createInsecure(),
    cliEnv: { FLOTILLA_INSECURE_PLAINTEXT: "1", FLOTILLA_ACTOR: "demo" },
    caFile: "",
  };
}

/**
 * The replica that took run `name` over last (by its log), with the lease epoch.
 * @param {TestProcess[]} hubs
 * @param {string} name
 * @returns {{ index: number, epoch: number } | undefined}
 */
function ownerOf(hubs, name) {
  /** @type {{ index: number, epoch: number } | undefined} */
  let best;
  hubs.forEach((hub, index) => {
    for (const text of hub.lines) {
      if (!text.includes("took over the update run")) continue;
      try {
        const entry = /** @type {{ run?: string, epoch?: number }} */ (
          JSON.parse(text)
        );
        const epoch = entry.epoch ?? 0;
        if (entry.run === name && (best === undefined || epoch > best.epoch))
          best = { index, epoch };
      } catch {
        // not a log line
      }
    }
  });
  return best;
}

/**
 * TLS to the hub's CA, and the admin token on every call.
 * @param {string} caFile
 * @param {string} token
 */
async function adminCredentials(caFile, token) {
  return credentials.combineChannelCredentials(
    credentials.createSsl(await readFile(caFile)),
    credentials.createFromMetadataGenerator((_params, callback) => {
      const metadata = new Metadata();
      metadata.set("authorization", `Bearer ${token}`);
      callback(null, metadata);
    }),
  );
}

/**
 * @param {string} address
 * @param {import("@grpc/grpc-js").ChannelCredentials} channel
 * @returns {wire.AdminServiceClient}
 */
function admin(address, channel) {
  return createAdminServiceClient(address, channel);
}

/** @param {TestProcess} proc */
async function isExited(proc) {
  const result = await Promise.race([proc.exited, sleep(1, undefined)]);
  return result !== undefined;
}

/**
 * The simulated fleet: 4 canary, 12 staging, 44 prod clusters in 4 regions.
 * @param {string} windowsFile
 * @param {string} catalogueFile
 */
function simulatedFleet(windowsFile, catalogueFile) {
  const pools = [
    { name: "system", imageFamily: IMAGE_FAMILY, imageVersion: IMAGE_BEFORE },
  ];
  /**
   * @param {string} namePrefix
   * @param {number} count
   * @param {string} env
   * @param {string} geo
   * @param {string} region
   */
  const entry = (namePrefix, count, env, geo, region) => ({
    namePrefix,
    count,
    labels: { env, geo, region },
    region,
  });
  return {
    seed: 7,
    defaults: {
      kubernetesVersion: "1.29.9",
      catalogueFile,
      nodePools: pools,
      timeToReady: { uniform: { minSeconds: 1, maxSeconds: 3 } },
      applyDuration: { fixedSeconds: 0.3 },
      upgradeDuration: { uniform: { minSeconds: 3, maxSeconds: 6 } },
    },
    clusters: [
      entry("canary-eu-", 2, "canary", "eu", "westeurope"),
      entry("canary-us-", 2, "canary", "us", "eastus"),
      entry("staging-eu-", 6, "staging", "eu", "northeurope"),
      entry("staging-us-", 6, "staging", "us", "westus"),
      entry("prod-eu-", 2, "prod", "eu", "westeurope"),
      {
        name: "prod-eu-03",
        labels: { env: "prod", geo: "eu", region: "westeurope" },
        region: "westeurope",
        // Owner-set windows, from a file its agent re-reads.
        maintenanceFile: windowsFile,
      },
      { ...entry("prod-eu-", 19, "prod", "eu", "northeurope"), startIndex: 4 },
      entry("prod-us-", 6, "prod", "us", "eastus"),
      {
        name: "prod-us-07",
        labels: { env: "prod", geo: "us", region: "eastus" },
        region: "eastus",
        failures: { upgradeRate: 1 },
      },
      { ...entry("prod-us-", 15, "prod", "us", "westus"), startIndex: 8 },
    ],
  };
}

/**
 * @param {number} done
 * @param {number} total
 * @param {number} [width]
 */
function bar(done, total, width = 30) {
  const filled = total === 0 ? 0 : Math.round((done / total) * width);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}]`;
}

/** @param {RunView} view */
function stageBars(view) {
  return view.stages
    .map((s) => {
      const members = s.groups.flatMap((g) => g.members);
      const done = members.filter((m) =>
        ["Succeeded", "Failed", "Skipped"].includes(m.state),
      ).length;
      const running = members.filter((m) => m.state === "Running").length;
      const failed = members.filter((m) => m.state === "Failed").length;
      return `${s.name} ${bar(done, members.length, 12)} ${String(done)}/${String(members.length)}${running > 0 ? ` ▶${String(running)}` : ""}${failed > 0 ? red(` ✗${String(failed)}`) : ""}`;
    })
    .join("  ");
}

let open = false;
/** @param {string} text */
function line(text) {
  if (tty) {
    process.stdout.write(`\r\x1b[2K${text}`);
    open = true;
  } else {
    // Without a terminal, a line only when something other than the clock changed.
    const key = text.replace(/^\s*\d+s /, "");
    if (key !== lastLine) say(text);
    lastLine = key;
    return;
  }
  lastLine = text;
}
let lastLine = "";
function endLine() {
  if (open) process.stdout.write("\n");
  open = false;
}

/** @param {string} text */
function indent(text) {
  return text
    .split("\n")
    .map((l) => (l === "" ? l : `  ${l}`))
    .join("\n")
    .replace(/\s*$/, "\n");
}

/**
 * Calls `check` until it returns true; an error marked `fatal` ends the wait at once.
 * @param {() => Promise<boolean>} check
 * @param {number} timeoutMs
 * @param {string} what
 * @returns {Promise<void>}
 */
async function waitUntil(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  /** @type {(Error & { fatal?: boolean }) | undefined} */
  let lastError;
  for (;;) {
    try {
      if (await check()) return;
      lastError = undefined;
    } catch (caught) {
      const error = /** @type {(Error & { fatal?: boolean }) | undefined} */ (
        caught
      );
      if (error?.fatal === true) throw error;
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what}${lastError ? `: ${lastError.message}` : ""}`,
      );
    }
    await sleep(tty ? 500 : 1000);
  }
}

const onSignal = () => {
  exitCode = 130;
  void finish();
};
process.once("SIGINT", onSignal);
process.once("SIGTERM", onSignal);

let finishing = false;
async function finish() {
  if (finishing) return;
  finishing = true;
  endLine();
  for (const step of cleanup.reverse()) {
    try {
      await step();
    } catch {
      // keep cleaning up
    }
  }
  process.exit(exitCode);
}

main()
  .catch((/** @type {unknown} */ error) => {
    endLine();
    process.stderr.write(
      `${red("demo failed:")} ${error instanceof Error ? error.message : String(error)}\n`,
    );
    exitCode = 1;
  })
  .finally(finish);
