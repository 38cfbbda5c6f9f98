// Which bundle content is referenced: a bundle record's manifests and rendered contents, and what
// each cluster's intent holds (an older revision during a rollout), leaving out a bundle being
// deleted; and the lock that keeps collections and content writes apart.
import { describe, expect, test } from "vitest";
import { emptyIntent, type ClusterIntent } from "@flotilla/core";
import { sha256Digest } from "@flotilla/protocol";
import type { BundleRecord } from "../src/bundles/bundle-record.js";
import {
  contentNamesOf,
  referencedContentNames,
} from "../src/bundles/content-references.js";
import { createReadWriteLock } from "@flotilla/node";

const d = (text: string): string => sha256Digest(text);
/** How the store names content (the JetStream store names sealed content after its key). */
const nameOf = (digest: string): string => `name-of-${digest}`;

function record(name: string, manifest: string, content: string): BundleRecord {
  return {
    name,
    namespace: "",
    manifests: [{ path: "a.yaml", digest: d(manifest), sizeBytes: 1 }],
    targetsJson: "",
    targetCustomizationsJson: "",
    rolloutStrategyJson: "",
    paused: false,
    revision: "r",
    contents: { "": d(content) },
    createdAtMs: 0,
    updatedAtMs: 0,
  };
}

function holding(
  cluster: string,
  bundle: string,
  content: string,
): ClusterIntent {
  return {
    ...emptyIntent(cluster),
    generation: 1,
    bundles: { [bundle]: { revision: "old", digest: d(content) } },
  };
}

describe("referencedContentNames", () => {
  test("names records' manifests and contents and the revisions intents hold", () => {
    const names = referencedContentNames(
      [record("web", "m1", "c1"), record("api", "m2", "c2")],
      [holding("edge-1", "web", "c0")],
      nameOf,
    );
    expect([...names].sort()).toEqual(
      ["m1", "c1", "m2", "c2", "c0"].map((t) => nameOf(d(t))).sort(),
    );
  });

  test("leaves out the bundle being deleted, in records and in intents, but not content another shares", () => {
    const names = referencedContentNames(
      [record("web", "shared", "c1"), record("api", "shared", "c2")],
      [holding("edge-1", "web", "c0"), holding("edge-2", "api", "c2")],
      nameOf,
      "web",
    );
    expect([...names].sort()).toEqual(
      ["shared", "c2"].map((t) => nameOf(d(t))).sort(),
    );
  });

  test("ignores a stored digest that is not one", () => {
    const bad = { ...record("web", "m1", "c1"), contents: { "": "nope" } };
    expect([...referencedContentNames([bad], [], nameOf)]).toEqual([
      nameOf(d("m1")),
    ]);
    expect(
      [...contentNamesOf(record("web", "m1", "c1"), nameOf)].sort(),
    ).toEqual([nameOf(d("m1")), nameOf(d("c1"))].sort());
  });
});

describe("createReadWriteLock", () => {
  test("shared tasks run together; an exclusive one waits for them and blocks later ones", async () => {
    const lock = createReadWriteLock();
    const events: string[] = [];
    let releaseReaders = (): void => undefined;
    const readersHeld = new Promise<void>((resolve) => {
      releaseReaders = resolve;
    });
    const reader = (name: string) =>
      lock.shared(async () => {
        events.push(`${name} in`);
        await readersHeld;
        events.push(`${name} out`);
      });
    const r1 = reader("r1");
    const r2 = reader("r2");
    const w = lock.exclusive(async () => {
      events.push("w in");
      await Promise.resolve();
      events.push("w out");
    });
    // Arrives after the exclusive task: waits for it.
    const r3 = lock.shared(async () => {
      events.push("r3 in");
      await Promise.resolve();
    });
    await Promise.resolve();
    expect(events).toEqual(["r1 in", "r2 in"]);
    releaseReaders();
    await Promise.all([r1, r2, w, r3]);
    expect(events).toEqual([
      "r1 in",
      "r2 in",
      "r1 out",
      "r2 out",
      "w in",
      "w out",
      "r3 in",
    ]);
  });

  test("a failing task releases the lock", async () => {
    const lock = createReadWriteLock();
    await expect(
      lock.exclusive(() => Promise.reject(new Error("boom"))),
    ).rejects.toThrow("boom");
    expect(await lock.shared(() => Promise.resolve(7))).toBe(7);
  });
});
