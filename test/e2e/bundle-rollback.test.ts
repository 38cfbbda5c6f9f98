/**
 * A bundle rollback end to end (docs/semantics.md#rolling-back-a-bundle): nats-server, the hub, six
 * simulated agents and the built CLI. Revision 1 of bundle `web` becomes Ready everywhere (good);
 * revision 2 rolls out with maxUnavailable 2; `flotilla bundle rollback web` makes revision 1
 * current again, and every cluster gets it back as a new intent generation and is Ready at it. A
 * rollback to a revision the bundle does not keep is refused with the revisions it does keep, and
 * a later `bundle apply` of revision 2 releases it again.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";
import { watchIntents, type IntentLog } from "./intent-log.js";

let e2e: E2E;
let work: string;
let intents: IntentLog | undefined;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-bundle-rollback-"));
  e2e = await startE2E({ hubLogLevel: "info" });
  await e2e.startAgents("fleet", fleetFile([clusters("edge-", 6, {})]));
  await e2e.connected(6);
});

afterEach(async () => {
  await intents?.close();
  intents = undefined;
  await Promise.all([e2e.stop(), rm(work, { recursive: true, force: true })]);
});

interface BundleView {
  readonly bundle: {
    readonly revision: string;
    readonly rolledBack?: {
      readonly fromRevision: string;
      readonly toRevision: string;
      readonly cause: string;
      readonly actor: string;
      readonly clustersBack: number;
      readonly clustersTouched: number;
    };
  };
  readonly clusters: {
    readonly cluster: string;
    readonly state: string;
    readonly releasedRevision?: string;
    readonly appliedRevision?: string;
  }[];
  readonly revisions: {
    readonly revision: string;
    readonly readyAtMs?: number;
    readonly current: boolean;
  }[];
}

async function bundleGet(): Promise<BundleView> {
  return JSON.parse(
    await e2e.ok("bundle", "get", "web", "-o", "json"),
  ) as BundleView;
}

const NAMES = [
  "edge-01",
  "edge-02",
  "edge-03",
  "edge-04",
  "edge-05",
  "edge-06",
];

/** Every cluster's intent holds `revision` (releasedRevision is read from it) and is Ready at it. */
async function allReadyAt(revision: string): Promise<boolean> {
  const view = await bundleGet();
  return NAMES.every((n) =>
    view.clusters.some(
      (c) =>
        c.cluster === n &&
        c.state === "BUNDLE_CLUSTER_STATE_READY" &&
        c.releasedRevision === revision &&
        c.appliedRevision === revision,
    ),
  );
}

describe("bundle rollback", () => {
  it("brings every cluster of a rollout back to the previous good revision, refuses a revision it does not keep, and a new apply releases the bad one again", async () => {
    const dir = join(work, "web");
    const fleetYaml = (version: string) =>
      Promise.all([
        writeFile(
          join(dir, "fleet.yaml"),
          "defaultNamespace: web\ntargets:\n  - clusterSelector: {}\nrolloutStrategy:\n  maxUnavailable: 2\n",
        ),
        writeFile(
          join(dir, "config.yaml"),
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  version: "${version}"\n`,
        ),
      ]);
    await mkdir(dir);
    await fleetYaml("1");
    await e2e.ok("bundle", "apply", dir);
    const r1 = (await bundleGet()).bundle.revision;
    await waitFor(() => allReadyAt(r1), {
      timeoutMs: 30_000,
      intervalMs: 200,
      message: "revision 1 Ready everywhere",
    });
    await waitFor(
      async () => (await bundleGet()).revisions[0]?.readyAtMs !== undefined,
      { timeoutMs: 10_000, intervalMs: 200, message: "revision 1 good" },
    );

    await fleetYaml("2");
    await e2e.ok("bundle", "apply", dir);
    const r2 = (await bundleGet()).bundle.revision;
    expect(r2).not.toBe(r1);
    await waitFor(() => allReadyAt(r2), {
      timeoutMs: 30_000,
      intervalMs: 200,
      message: "revision 2 Ready everywhere",
    });

    // Refused, nothing stored: the message lists the revisions kept.
    const refused = await e2e.cli(
      "bundle",
      "rollback",
      "web",
      "--to",
      "0000000",
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`revisions kept: ${r2} (current), ${r1}`);
    expect((await bundleGet()).bundle.revision).toBe(r2);

    intents = await watchIntents(e2e.nats.url);
    const before = Date.now();
    const said = await e2e.ok(
      "bundle",
      "rollback",
      "web",
      "--reason",
      "errors up",
    );
    expect(said).toContain(
      `rolled back from ${r2.slice(0, 12)} to ${r1.slice(0, 12)}: 6 cluster(s)`,
    );
    await waitFor(() => allReadyAt(r1), {
      timeoutMs: 30_000,
      intervalMs: 200,
      message: "revision 1 Ready everywhere again",
    });
    const view = await bundleGet();
    expect(view.bundle.revision).toBe(r1);
    expect(view.bundle.rolledBack).toMatchObject({
      fromRevision: r2,
      toRevision: r1,
      cause: "ROLLBACK_CAUSE_MANUAL",
      clustersBack: 6,
      clustersTouched: 6,
    });
    expect(view.revisions.map((r) => [r.revision, r.current])).toEqual([
      [r1, true],
      [r2, false],
    ]);
    // Each cluster got revision 1 back as a new intent generation.
    for (const n of NAMES)
      expect(
        intents.of(n).filter((r) => r.atMs >= before).length,
      ).toBeGreaterThan(0);
    expect(intents.conflicts()).toEqual([]);
    expect(await e2e.ok("bundle", "list")).toContain("RolledBack");
    const history = await e2e.ok("bundle", "history", "web");
    expect(history).toContain("rolled back from");

    // A new apply of revision 2 clears the rollback and releases it again.
    await e2e.ok("bundle", "apply", dir);
    await waitFor(() => allReadyAt(r2), {
      timeoutMs: 30_000,
      intervalMs: 200,
      message: "revision 2 Ready everywhere after the new apply",
    });
    expect((await bundleGet()).bundle.rolledBack).toBeUndefined();
  }, 180_000);
});
