import {
  createConfigMapMaintenanceSource,
  type WindowsChanged,
} from "@flotilla/agent";
import { waitFor, type KubeApiServer } from "@flotilla/testkit";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { kubeServer } from "./support/kube-upgrade-fixtures.js";

const WEEKLY = `# owner's comment
maintenance:
  kubernetes:
    - schedule: { weekly: { dayOfWeek: Saturday } }
      startTime: "22:00"
      durationHours: 4
`;

function putWindows(server: KubeApiServer, text: string | undefined): void {
  server.put({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "flotilla-agent-windows", namespace: "flotilla" },
    data: text === undefined ? { other: "x" } : { "windows.yaml": text },
  });
}

async function setup(initial: string | null = WEEKLY) {
  const { server, kubeConfig } = await kubeServer(["flotilla"], []);
  if (initial !== null) putWindows(server, initial);
  const lines: string[] = [];
  const logger = pino(
    { level: "info" },
    { write: (line: string) => lines.push(line) },
  );
  const source = createConfigMapMaintenanceSource(
    { kubeConfig, logger },
    { namespace: "flotilla", name: "flotilla-agent-windows", retryMs: 10 },
  );
  const events: WindowsChanged[] = [];
  source.watch((e) => events.push(e));
  return {
    server,
    source,
    lines,
    events,
    [Symbol.asyncDispose]: async () => {
      await source.stop();
      await server.close();
    },
  };
}

const kubernetesWindows = (s: {
  current(): { maintenance?: { windows: { kubernetes: readonly unknown[] } } };
}) => s.current().maintenance?.windows.kubernetes;

describe("ConfigMap maintenance source", () => {
  it("loads valid windows on start", async () => {
    await using t = await setup();
    const { source, events } = t;
    await source.start();
    expect(source.current().error).toBeUndefined();
    expect(kubernetesWindows(source)).toEqual([
      expect.objectContaining({
        type: "Recurring",
        schedule: { type: "Weekly", intervalWeeks: 1, dayOfWeek: "Saturday" },
        startTime: "22:00",
      }),
    ]);
    expect(events).toHaveLength(1);
  });

  it("sees an edit at once through its watch, without reading again", async () => {
    await using t = await setup();
    const { server, source, events } = t;
    await source.start();
    await waitFor(() => server.requests().some((r) => r.verb === "watch"));
    const reads = () =>
      server.requests().filter((r) => r.verb === "get").length;
    const before = reads();
    putWindows(server, WEEKLY.replace("22:00", "03:30"));
    await waitFor(() => events.length === 2);
    expect(kubernetesWindows(source)).toEqual([
      expect.objectContaining({ startTime: "03:30" }),
    ]);
    expect(reads()).toBe(before);
    const watch = server.requests().find((r) => r.verb === "watch");
    expect(watch?.path).toBe("/api/v1/namespaces/flotilla/configmaps");
  });

  it("keeps the last valid windows in force when the content is invalid, with the field path, and logs it", async () => {
    await using t = await setup();
    const { server, source, events, lines } = t;
    await source.start();
    putWindows(server, WEEKLY.replace('"22:00"', '"25:00"'));
    await waitFor(() => source.current().error);
    const { error } = source.current();
    expect(error?.source).toBe(
      'ConfigMap "flotilla/flotilla-agent-windows" key "windows.yaml"',
    );
    expect(error?.problems.map((p) => p.path)).toEqual([
      "maintenance.kubernetes[0].startTime",
    ]);
    expect(error?.message).toMatch(
      /maintenance\.kubernetes\[0\]\.startTime: .*"25:00".*; the last valid configuration stays in force$/,
    );
    expect(kubernetesWindows(source)).toEqual([
      expect.objectContaining({ startTime: "22:00" }),
    ]);
    expect(events.at(-1)?.state.error).toBeDefined();
    expect(
      lines.some(
        (l) =>
          l.includes('"level":40') &&
          l.includes("maintenance.kubernetes[0].startTime"),
      ),
    ).toBe(true);

    putWindows(server, "maintenance: [oops");
    await waitFor(() =>
      source.current().error?.message.includes("not valid YAML"),
    );
    expect(kubernetesWindows(source)).toHaveLength(1);

    putWindows(server, WEEKLY);
    await waitFor(() => source.current().error === undefined);
  });

  it("treats a missing key as an error and a deleted ConfigMap as no windows", async () => {
    await using t = await setup();
    const { server, source } = t;
    await source.start();
    putWindows(server, undefined);
    await waitFor(() => source.current().error);
    expect(source.current().error?.message).toContain(
      'it has no key "windows.yaml" (keys: other)',
    );
    expect(kubernetesWindows(source)).toHaveLength(1);
    server.remove("ConfigMap", "flotilla", "flotilla-agent-windows");
    await waitFor(() => source.current().maintenance === undefined);
    expect(source.current()).toEqual({});
  });

  it("keeps what is in force when it may not read the ConfigMap", async () => {
    await using t = await setup();
    const { server, source } = t;
    await source.reload();
    server.forbid("get", "configmaps");
    const state = await source.reload();
    expect(state.error?.message).toMatch(
      /cannot read it: .*forbidden.*; the last valid configuration stays in force/,
    );
    expect(kubernetesWindows(source)).toHaveLength(1);
  });

  it("starts with no windows when the ConfigMap does not exist, and picks it up when created", async () => {
    await using t = await setup(null);
    const { server, source, events } = t;
    await source.start();
    expect(source.current()).toEqual({});
    putWindows(server, WEEKLY);
    await waitFor(() => kubernetesWindows(source)?.length === 1);
    expect(events).toHaveLength(1);
  });
});
