import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createFileProgressStore,
  type ProgressRecord,
  type ProgressStore,
} from "@flotilla/agent";
import {
  createMemoryProgressStore,
  isGenerationHandled,
} from "@flotilla/agent/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const record = (cluster: string, generation: number): ProgressRecord => ({
  cluster,
  generation,
  outcome: "Succeeded",
  items: [
    {
      subject: { kind: "bundle", bundle: "web", revision: "3" },
      phase: "Ready",
    },
    {
      subject: { kind: "upgrade", upgradeId: "upgrade-1" },
      phase: "Failed",
      reason: "Unsupported",
      error: "Cannot upgrade",
    },
  ],
  handledAtMs: 1_735_689_600_000,
});

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "flotilla-progress-"));
  file = join(dir, "state", "progress.json");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.each([
  { name: "memory", make: (): ProgressStore => createMemoryProgressStore() },
  { name: "file", make: (): ProgressStore => createFileProgressStore(file) },
])("ProgressStore contract: $name", ({ make }) => {
  it("returns what was put, per cluster, as a copy", async () => {
    const store = make();
    expect(await store.load()).toEqual({});
    expect(store.get("a")).toBeUndefined();
    await store.put(record("a", 4));
    await store.put(record("b", 9));
    await store.put(record("a", 5));
    expect(store.get("a")).toEqual(record("a", 5));
    expect(store.get("b")?.generation).toBe(9);
    const copy = store.get("a") as { generation: number };
    copy.generation = 99;
    expect(store.get("a")?.generation).toBe(5);
  });

  it("refuses a put whose signal already aborted", async () => {
    const store = make();
    await store.load();
    await expect(
      store.put(record("a", 1), {
        signal: AbortSignal.abort(new Error("stop")),
      }),
    ).rejects.toThrow("stop");
    expect(store.get("a")).toBeUndefined();
  });
});

describe("the file progress store", () => {
  it("lets a restarted agent find the generation it finished", async () => {
    const first = createFileProgressStore(file);
    await first.load();
    await first.put(record("prod-01", 7));
    const restarted = createFileProgressStore(file);
    expect(await restarted.load()).toEqual({});
    const stored = restarted.get("prod-01");
    expect(stored).toEqual(record("prod-01", 7));
    expect(isGenerationHandled(stored, 7)).toBe(true);
    expect(isGenerationHandled(stored, 6)).toBe(true);
    expect(isGenerationHandled(stored, 8)).toBe(false);
    expect(isGenerationHandled(undefined, 1)).toBe(false);
  });

  it("replaces the file by rename, leaving no temporary files behind", async () => {
    const store = createFileProgressStore(file);
    await store.load();
    await store.put(record("a", 1));
    const before = await stat(file);
    await store.put(record("a", 2));
    const after = await stat(file);
    // A new inode means the file was swapped whole, never rewritten in place.
    expect(after.ino).not.toBe(before.ino);
    expect(await readdir(join(dir, "state"))).toEqual(["progress.json"]);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      version: 1,
      clusters: { a: record("a", 2) },
    });
  });

  it("persists a burst of puts from many clusters", async () => {
    const store = createFileProgressStore(file);
    await store.load();
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        store.put(record(`c-${String(i)}`, i + 1)),
      ),
    );
    const reread = createFileProgressStore(file);
    await reread.load();
    expect(reread.get("c-59")?.generation).toBe(60);
    expect(reread.get("c-0")?.generation).toBe(1);
  });

  it.each([
    ["not JSON", "{ truncated"],
    [
      "the wrong shape",
      JSON.stringify({ version: 1, clusters: { a: { generation: "x" } } }),
    ],
  ])(
    "starts fresh with a warning when the file is %s, keeping the bad file aside",
    async (_, content) => {
      await mkdir(join(dir, "state"), { recursive: true });
      await writeFile(file, content);
      const fresh = createFileProgressStore(file);
      const loaded = await fresh.load();
      expect(loaded.warning).toMatch(
        new RegExp(
          `Progress file ".*progress\\.json" is corrupted \\(.+\\): moved it to ".*progress\\.json\\.corrupt" and started fresh`,
        ),
      );
      expect(fresh.get("a")).toBeUndefined();
      expect(await readFile(`${file}.corrupt`, "utf8")).toBe(content);
      await fresh.put(record("a", 1));
      const reread = createFileProgressStore(file);
      expect(await reread.load()).toEqual({});
      expect(reread.get("a")?.generation).toBe(1);
    },
  );

  it("refuses get and put before load", () => {
    const store = createFileProgressStore(file);
    expect(() => store.get("a")).toThrow(/call load\(\) first/);
  });
});
