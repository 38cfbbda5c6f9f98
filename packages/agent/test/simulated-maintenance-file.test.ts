import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSimulatedCluster, type WindowsChanged } from "@flotilla/agent";
import {
  createMaintenanceFile,
  mulberry32,
  parseSimulatedCluster,
} from "@flotilla/agent/testing";
import { createManualClock } from "@flotilla/node/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";

const parseText = (text: string): unknown => parseYaml(text) as unknown;

const VALID = `maintenance:
  kubernetes:
    schedule: { daily: null }
    startTime: "02:00"
    durationHours: 4
`;
const INVALID = `maintenance:
  kubernetes:
    schedule: { daily: null }
    startTime: "25:00"
    durationHours: 4
`;
const OTHER = `maintenance:
  kubernetes:
    schedule: { daily: null }
    startTime: "12:00"
    durationHours: 4
`;

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "flotilla-windows-"));
  file = join(dir, "windows.yaml");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a maintenance file", () => {
  it("loads windows in core's shape and announces the change", async () => {
    await writeFile(file, VALID);
    const source = createMaintenanceFile(file, { parseText });
    const events: WindowsChanged[] = [];
    source.watch((e) => events.push(e));
    const state = await source.reload();
    expect(state.error).toBeUndefined();
    expect(state.maintenance?.windows.kubernetes).toEqual([
      expect.objectContaining({
        type: "Recurring",
        startTime: "02:00",
        durationHours: 4,
      }),
    ]);
    expect(events).toEqual([{ type: "WindowsChanged", state }]);
    await source.reload();
    expect(events).toHaveLength(1);
  });

  it("keeps the last valid configuration in force when the file turns invalid, exposing the error with its path", async () => {
    await writeFile(file, VALID);
    const source = createMaintenanceFile(file, { parseText });
    const valid = (await source.reload()).maintenance;
    const events: WindowsChanged[] = [];
    source.watch((e) => events.push(e));
    await writeFile(file, INVALID);
    const state = await source.reload();
    expect(state.maintenance).toEqual(valid);
    expect(state.error).toEqual({
      source: file,
      message: `Cannot load maintenance windows from "${file}": maintenance.kubernetes.startTime: must be HH:MM from 00:00 to 23:59 (got "25:00"); the last valid configuration stays in force`,
      problems: [
        {
          path: "maintenance.kubernetes.startTime",
          message: "must be HH:MM from 00:00 to 23:59",
          value: "25:00",
        },
      ],
    });
    expect(events).toEqual([{ type: "WindowsChanged", state }]);
    await writeFile(file, OTHER);
    const fixed = await source.reload();
    expect(fixed.error).toBeUndefined();
    expect(fixed.maintenance?.windows.kubernetes[0]).toMatchObject({
      startTime: "12:00",
    });
    expect(events).toHaveLength(2);
  });

  it("puts no windows in force when the first content is invalid, unreadable or missing", async () => {
    const source = createMaintenanceFile(file, { parseText });
    expect((await source.reload()).error?.message).toBe(
      `Cannot load maintenance windows from "${file}": no such file; no windows are in force`,
    );
    await writeFile(file, "maintenance: [unclosed");
    const broken = await source.reload();
    expect(broken.maintenance).toBeUndefined();
    expect(broken.error?.message).toContain("not valid YAML");
    await writeFile(file, "maintenanse: {}\n");
    expect((await source.reload()).error?.problems).toEqual([
      {
        path: "maintenanse",
        message: "unknown field (known fields: maintenance)",
      },
    ]);
  });

  it("treats an empty file as no constraints", async () => {
    await writeFile(file, "");
    expect(await createMaintenanceFile(file, { parseText }).reload()).toEqual(
      {},
    );
  });

  it("refuses a YAML file without a parser when created", () => {
    expect(() => createMaintenanceFile(file)).toThrow(
      /YAML files need a parseText option/,
    );
  });
});

describe("a simulated cluster's windows from its file", () => {
  it("holds upgrades while the file's window is closed and follows the file after reload()", async () => {
    await writeFile(file, VALID);
    const parsed = parseSimulatedCluster({
      name: "sim-1",
      kubernetesVersion: "1.30.5",
      upgradeDuration: { fixedSeconds: 0 },
      maintenanceFile: file,
    });
    if (!parsed.ok) throw new Error("bad config");
    const clock = createManualClock(Date.parse("2025-01-01T12:30:00Z"));
    const cluster = createSimulatedCluster(parsed.value, {
      clock,
      random: mulberry32(1),
      parseText,
    });
    await cluster.start();
    const request = {
      run: "r",
      type: "ControlPlaneOnly" as const,
      target: { kubernetesVersion: "1.31.0" },
    };
    expect(await cluster.upgrades.start(request)).toMatchObject({
      type: "Pending",
      pendingUntilMs: Date.parse("2025-01-02T02:00:00Z"),
    });
    await writeFile(file, INVALID);
    await cluster.windows.reload();
    expect((await cluster.upgrades.start(request)).type).toBe("Pending");
    expect(
      (await cluster.facts()).maintenance?.windows.kubernetes[0],
    ).toMatchObject({ startTime: "02:00" });
    await writeFile(file, OTHER);
    await cluster.windows.reload();
    expect(await cluster.upgrades.start(request)).toMatchObject({
      type: "Succeeded",
    });
  });
});
