// The live demo (README's first command, via scripts/demo.sh): a real nats-server with JetStream,
// the hub, and 60 simulated clusters' agents in one process, each with its own gRPC stream and
// intent watcher. Then, through the `flotilla` CLI as an operator would type it:
//   (a) a Fleet-style bundle rolled out by partitions (canary, staging, prod);
//   (b) a Kubernetes upgrade as a staged update run canary → staging → prod, with an approval gate
//       that waits until the demo approves it, a cluster whose maintenance window is still closed
//       (Pending, finishing when the window opens) and a cluster whose upgrade fails (within the
//       prod group's failure budget).
// Live progress on screen, a summary at the end, exit 0 when both rollouts completed. Every
// process started here is stopped on the way out, whatever happens.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";

const root = new URL("..", import.meta.url).pathname;
const { startNatsServer, startProcess, runProcess, freePort } = await import(
  `${root}packages/testkit/dist/index.js`
);
const { createAdminServiceClient, callUnary, runFromWire } = await import(
  `${root}packages/protocol/dist/index.js`
);
// grpc-js is a dependency of the workspace packages, not of the repository root.
const { credentials } = await import(
  pathToFileURL(
    createRequire(`${root}packages/protocol/package.json`).resolve(
      "@grpc/grpc-js",
    ),
  ).href
);

const tty = process.stdout.isTTY === true;
const bold = (s) => (tty ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s) => (tty ? `\x1b[2m${s}\x1b[0m` : s);
const green = (s) => (tty ? `\x1b[32m${s}\x1b[0m` : s);
const yellow = (s) => (tty ? `\x1b[33m${s}\x1b[0m` : s);
const red = (s) => (tty ? `\x1b[31m${s}\x1b[0m` : s);
const say = (s = "") => process.stdout.write(`${s}\n`);
const started = Date.now();
const elapsed = () =>
  `${String(Math.round((Date.now() - started) / 1000)).padStart(3)}s`;

const cleanup = [];
let exitCode = 1;

async function main() {
  const work = await mkdtemp(join(tmpdir(), "flotilla-demo-"));
  cleanup.push(() => rm(work, { recursive: true, force: true }));

  say(bold("flotilla live demo"));
  say(
    dim("Starting nats-server (JetStream), the hub and 60 simulated clusters…"),
  );
  const nats = await startNatsServer();
  cleanup.push(() => nats.stop());

  const hubPort = await freePort();
  const hubAddress = `127.0.0.1:${hubPort}`;
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
      "--insecure-plaintext",
      "--heartbeat-interval",
      "2s",
      "--pass-interval",
      "1s",
      "--log-level",
      "warn",
    ],
  });
  cleanup.push(() => hub.stop());
  await waitUntil(
    async () => {
      try {
        await callUnary(admin(hubAddress), "listClusters", {});
        return true;
      } catch {
        if (hub.lines.length > 0 && (await isExited(hub)))
          throw new Error(`the hub exited:\n${hub.output()}`);
        return false;
      }
    },
    30_000,
    "the hub to serve",
  );

  // prod-eu-03's owner allows Kubernetes upgrades only in a window that opens in an hour; the
  // demo plays the owner later and opens one early, by editing the file its agent watches.
  const windowsFile = join(work, "prod-eu-03-windows.json");
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
  const fleetFile = join(work, "fleet.json");
  await writeFile(
    fleetFile,
    JSON.stringify(simulatedFleet(windowsFile), null, 2),
  );
  const agents = startProcess({
    name: "agents",
    args: [
      "packages/agent/dist/main.js",
      "--simulated-fleet",
      fleetFile,
      "--hub",
      hubAddress,
      "--insecure-plaintext",
      "--nats",
      nats.url,
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

  const client = admin(hubAddress);
  await waitUntil(
    async () => {
      const { clusters } = await callUnary(client, "listClusters", {
        pageSize: 1000,
      });
      const connected = clusters.filter(
        (c) => c.connection === "CONNECTION_STATE_CONNECTED",
      ).length;
      line(`  ${bar(connected, 60)} ${connected}/60 agents connected`);
      return connected === 60;
    },
    60_000,
    "60 agents to connect",
  );
  endLine();

  const cli = async (args, { quiet = false } = {}) => {
    const shown = args.map((a) => (/[\s"]/.test(a) ? JSON.stringify(a) : a));
    say(`${dim("$")} flotilla ${shown.join(" ")}`);
    const result = await runProcess({
      name: "flotilla",
      args: ["packages/cli/dist/main.js", ...args],
      env: {
        FLOTILLA_HUB: hubAddress,
        FLOTILLA_INSECURE_PLAINTEXT: "1",
        FLOTILLA_ACTOR: "demo",
      },
    });
    if (!quiet || result.code !== 0)
      process.stdout.write(indent(result.stdout));
    if (result.code !== 0)
      throw new Error(
        `flotilla ${args.join(" ")} exited ${result.code}:\n${result.stderr}`,
      );
    return result.stdout;
  };

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
  let bundleCounts;
  await waitUntil(
    async () => {
      const { bundle } = await callUnary(client, "getBundle", {
        name: "web-frontend",
      });
      bundleCounts = bundle.counts;
      const ready = bundleCounts.ready ?? 0;
      line(
        `  ${elapsed()} ${bar(ready, bundleCounts.targets)} ${ready}/${bundleCounts.targets} Ready  ${dim(`waitApplied ${bundleCounts.waitApplied ?? 0}, notReady ${bundleCounts.notReady ?? 0}, pending ${bundleCounts.pending ?? 0}`)}`,
      );
      return bundleCounts.targets === 60 && ready === 60;
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
  let final;
  await waitUntil(
    async () => {
      const { run: wireRun } = await callUnary(client, "getUpdateRun", {
        name: "k8s-1-30",
      });
      const run = runFromWire(wireRun);
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

  // Summary.
  const members = final.stages.flatMap((s) =>
    s.groups.flatMap((g) => g.members),
  );
  const count = (state) => members.filter((m) => m.state === state).length;
  say();
  say(bold("Summary"));
  say(
    `  bundle web-frontend   ${green("Ready")} on ${bundleCounts.ready}/${bundleCounts.targets} clusters`,
  );
  say(
    `  run k8s-1-30          ${final.state === "Completed" ? green(final.state) : red(final.state)}: ${count("Succeeded")} succeeded, ${count("Failed")} failed (within budget), ${count("Skipped")} skipped, ${members.length} members`,
  );
  say(`  approval gate         approved by the demo through the CLI`);
  say(
    `  maintenance window    prod-eu-03 ${sawWindowPending ? "waited Pending until its owner opened a window, then upgraded" : "was never held by its window"}`,
  );
  say(`  took ${elapsed().trim()}`);
  if (
    final.state !== "Completed" ||
    !sawWindowPending ||
    !windowOpened ||
    count("Failed") !== 1
  ) {
    throw new Error("the demo did not go as planned (see above)");
  }
  exitCode = 0;
}

function admin(address) {
  return createAdminServiceClient(address, credentials.createInsecure());
}

async function isExited(proc) {
  const result = await Promise.race([proc.exited, sleep(1, undefined)]);
  return result !== undefined;
}

/** The simulated fleet: 4 canary, 12 staging, 44 prod clusters in 4 regions. */
function simulatedFleet(windowsFile) {
  const pools = [
    { name: "system", imageFamily: "ubuntu-22.04", imageVersion: "2026.11.20" },
  ];
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

function bar(done, total, width = 30) {
  const filled = total === 0 ? 0 : Math.round((done / total) * width);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}]`;
}

function stageBars(view) {
  return view.stages
    .map((s) => {
      const members = s.groups.flatMap((g) => g.members);
      const done = members.filter((m) =>
        ["Succeeded", "Failed", "Skipped"].includes(m.state),
      ).length;
      const running = members.filter((m) => m.state === "Running").length;
      const failed = members.filter((m) => m.state === "Failed").length;
      return `${s.name} ${bar(done, members.length, 12)} ${done}/${members.length}${running > 0 ? ` ▶${running}` : ""}${failed > 0 ? red(` ✗${failed}`) : ""}`;
    })
    .join("  ");
}

let open = false;
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

function indent(text) {
  return text
    .split("\n")
    .map((l) => (l === "" ? l : `  ${l}`))
    .join("\n")
    .replace(/\s*$/, "\n");
}

async function waitUntil(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  for (;;) {
    try {
      if (await check()) return;
      lastError = undefined;
    } catch (error) {
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
  .catch((error) => {
    endLine();
    process.stderr.write(
      `${red("demo failed:")} ${error instanceof Error ? error.message : String(error)}\n`,
    );
    exitCode = 1;
  })
  .finally(finish);
