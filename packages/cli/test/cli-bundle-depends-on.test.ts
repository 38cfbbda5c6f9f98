/**
 * fleet.yaml `labels` and `dependsOn` in the CLI (docs/semantics.md#dependencies-between-bundles):
 * what apply sends, what it refuses before sending, and how `bundle get|list` show labels,
 * dependencies and the DependenciesNotReady hold.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { wire } from "@flotilla/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { NOW_MS } from "./fixtures.js";
import { runCliOnDisk } from "./support/run-cli.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "flotilla-depends-"));
  await writeFile(
    join(dir, "cm.yaml"),
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n",
  );
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const bundle = (spec: wire.BundleSpec): wire.Bundle => ({
  spec,
  revision: "sha256:aaaabbbbccccdddd",
  createdAtMs: NOW_MS,
  updatedAtMs: NOW_MS - 60_000,
  counts: { targets: 1, pending: 1 },
});

describe("flotilla bundle apply with labels and dependsOn", () => {
  it("sends labels as a map and dependsOn as JSON", async () => {
    await writeFile(
      join(dir, "fleet.yaml"),
      "labels: {tier: web}\ndependsOn:\n  - name: db\n  - selector: {matchLabels: {tier: cache}}\n",
    );
    await using hub = await startFakeHub({
      unary: {
        ApplyBundle: (req) => ({
          bundle: bundle(req.bundle ?? { name: "x" }),
          changed: true,
          warnings: [],
        }),
      },
    });
    const { code, err } = await runCliOnDisk(
      [
        "bundle",
        "apply",
        dir,
        "--name",
        "app",
        "--hub",
        hub.address,
        "--insecure-plaintext",
      ],
      { env: {}, nowMs: NOW_MS },
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    const [request] =
      hub.requests<wire.ApplyBundleRequest__Output>("ApplyBundle");
    expect(request?.bundle?.labels).toEqual({ tier: "web" });
    expect(JSON.parse(request?.bundle?.dependsOnJson ?? "")).toEqual([
      { name: "db" },
      { selector: { matchLabels: { tier: "cache" } } },
    ]);
  });

  it("refuses an entry with both name and selector before sending, exit 2", async () => {
    await writeFile(
      join(dir, "fleet.yaml"),
      "dependsOn:\n  - name: db\n    selector: {matchLabels: {a: b}}\n",
    );
    await using hub = await startFakeHub({});
    const { code, err } = await runCliOnDisk(
      ["bundle", "apply", dir, "--hub", hub.address, "--insecure-plaintext"],
      { env: {}, nowMs: NOW_MS },
    );
    expect(code).toBe(2);
    expect(err).toContain(
      `${join(dir, "fleet.yaml")}: dependsOn[0]: must set name or selector, not both`,
    );
    expect(hub.calls).toEqual([]);
  });
});

describe("flotilla bundle get and list with dependencies", () => {
  const app = bundle({
    name: "app",
    labels: { tier: "web" },
    dependsOnJson: JSON.stringify([
      { name: "db" },
      { selector: { matchLabels: { tier: "cache" } } },
    ]),
  });

  it("shows labels, dependencies and the DependenciesNotReady hold", async () => {
    await using hub = await startFakeHub({
      unary: {
        GetBundle: () => ({
          bundle: app,
          clusters: [
            {
              cluster: "c-1",
              state: "BUNDLE_CLUSTER_STATE_PENDING",
              partition: "All",
              held: "HOLD_REASON_DEPENDENCIES_NOT_READY",
              message: 'waiting for dependencies: bundle "db" is NotReady',
            },
          ],
        }),
      },
    });
    const { code, out } = await cliAgainst(hub, ["bundle", "get", "app"]);
    expect(code).toBe(0);
    const lines = out.split("\n");
    expect(lines[2]).toBe("  Labels: tier=web");
    expect(lines[3]).toBe('  Depends on: bundle "db", selector "tier=cache"');
    expect(out).toMatch(
      /\nc-1 +All +Pending +- +- +DependenciesNotReady +waiting for dependencies: bundle "db" is NotReady\n/,
    );
  });

  it("lists a LABELS column only when some bundle has labels", async () => {
    const plain = bundle({ name: "plain" });
    const list = (bundles: wire.Bundle[]) =>
      startFakeHub({
        unary: { ListBundles: () => ({ bundles, nextPageToken: "" }) },
      });
    {
      await using hub = await list([plain]);
      const { out } = await cliAgainst(hub, ["bundle", "list"]);
      expect(out.split("\n")[0]).not.toContain("LABELS");
    }
    await using hub = await list([app, plain]);
    const { out } = await cliAgainst(hub, ["bundle", "list"]);
    expect(out.split("\n")[0]).toMatch(/ LABELS$/);
    expect(out).toMatch(/\napp .* tier=web\n/);
    expect(out).toMatch(/\nplain .* <none>\n/);
  });
});
