/**
 * The chart fetcher with the real helm against a chart repository served on loopback (the
 * testkit's startChartRepository): a chart by exact version, by a range and the newest; a missing
 * chart and a missing version; a repository that refuses without credentials and serves with
 * them; an archive URL; a chart over the size limit; and the same from an OCI registry on loopback
 * (startOciRegistry). It starts helm: e2e loop.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import {
  findTool,
  startChartRepository,
  startOciRegistry,
  type ChartRepository,
  type OciRegistry,
} from "@flotilla/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHelmChartFetcher } from "../src/bundles/chart-fetcher.js";
import type {
  ChartFetcher,
  FetchedChart,
} from "../src/bundles/chart-source.js";
import type { Result } from "@flotilla/core";

const AUTH = { username: "fleet", password: "s3cret-chart-pass" };

async function writeChart(
  root: string,
  name: string,
  version: string,
): Promise<void> {
  const dir = join(root, `${name}-${version}`);
  await mkdir(join(dir, "templates"), { recursive: true });
  await writeFile(
    join(dir, "Chart.yaml"),
    `apiVersion: v2\nname: ${name}\nversion: ${version}\nappVersion: "${version}"\n`,
  );
  await writeFile(
    join(dir, "templates", "configmap.yaml"),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  version: "${version}"\n`,
  );
}

function fetched(result: Result<FetchedChart>): FetchedChart {
  if (!result.ok)
    throw new Error(result.problems.map((p) => p.message).join("\n"));
  return result.value;
}

function refusal(result: Result<FetchedChart>): string {
  if (result.ok)
    throw new Error(`fetched ${result.value.name} ${result.value.version}`);
  return result.problems.map((p) => p.message).join("\n");
}

/** The archive is a gzipped tar whose first entry is `name/Chart.yaml` or another chart file. */
function firstEntryOf(archive: Uint8Array): string {
  return gunzipSync(archive)
    .subarray(0, 100)
    .toString("utf8")
    .replace(/\0.*$/s, "");
}

describe("fetching charts with helm pull", () => {
  let charts: string;
  let open: ChartRepository;
  let guarded: ChartRepository;
  let fetcher: ChartFetcher;
  let helm: string;

  beforeAll(async () => {
    helm = await findTool("helm");
    charts = await mkdtemp(join(tmpdir(), "flotilla-charts-"));
    for (const version of ["1.0.0", "1.2.0", "1.2.5", "2.0.0"])
      await writeChart(charts, "demo", version);
    open = await startChartRepository(charts);
    guarded = await startChartRepository(charts, { auth: AUTH });
    fetcher = createHelmChartFetcher({ helm });
  }, 60_000);

  afterAll(async () => {
    await open.stop();
    await guarded.stop();
    await rm(charts, { recursive: true, force: true });
  });

  it("fetches a chart by name and exact version, the same bytes each time", async () => {
    const first = fetched(
      await fetcher.fetch({ repo: open.url, chart: "demo", version: "1.2.0" }),
    );
    expect(first).toMatchObject({ name: "demo", version: "1.2.0" });
    expect(firstEntryOf(first.archive)).toMatch(/^demo\//);
    const again = fetched(
      await fetcher.fetch({ repo: open.url, chart: "demo", version: "1.2.0" }),
    );
    expect(Buffer.from(again.archive).equals(Buffer.from(first.archive))).toBe(
      true,
    );
  });

  it("takes the newest version a range matches, and the newest of all without a version", async () => {
    expect(
      fetched(
        await fetcher.fetch({
          repo: open.url,
          chart: "demo",
          version: "~1.2.0",
        }),
      ).version,
    ).toBe("1.2.5");
    expect(
      fetched(
        await fetcher.fetch({
          repo: open.url,
          chart: "demo",
          version: "^1.0.0",
        }),
      ).version,
    ).toBe("1.2.5");
    expect(
      fetched(await fetcher.fetch({ repo: open.url, chart: "demo" })).version,
    ).toBe("2.0.0");
  });

  it("names the chart and the cause when the chart or the version is missing", async () => {
    const missing = refusal(
      await fetcher.fetch({ repo: open.url, chart: "nope" }),
    );
    expect(missing).toContain(`chart nope from ${open.url}`);
    expect(missing).toMatch(/does not exist/);
    const version = refusal(
      await fetcher.fetch({ repo: open.url, chart: "demo", version: "3.x" }),
    );
    expect(version).toContain(`chart demo from ${open.url} version 3.x`);
    expect(version).toMatch(/no version of the chart matches/);
  });

  it("says a repository that is not there cannot be reached", async () => {
    const gone = refusal(
      await fetcher.fetch({ repo: "http://127.0.0.1:1", chart: "demo" }),
    );
    expect(gone).toMatch(/cannot be reached/);
  });

  it("is refused by a private repository without credentials, and fetches with them", async () => {
    const before = guarded.refused();
    const denied = refusal(
      await fetcher.fetch({
        repo: guarded.url,
        chart: "demo",
        version: "1.0.0",
      }),
    );
    expect(denied).toMatch(/refused the credentials/);
    expect(guarded.refused()).toBeGreaterThan(before);
    const wrong = createHelmChartFetcher({
      helm,
      credentials: [
        {
          url: guarded.url,
          username: AUTH.username,
          password: "wrong-password",
        },
      ],
    });
    const bad = refusal(
      await wrong.fetch({ repo: guarded.url, chart: "demo" }),
    );
    expect(bad).toMatch(/refused the credentials/);
    expect(bad).not.toContain("wrong-password");
    const withCredentials = createHelmChartFetcher({
      helm,
      credentials: [
        { url: "http://127.0.0.1", username: "someone-else", password: "x" },
        { url: guarded.url, ...AUTH },
      ],
    });
    expect(
      fetched(
        await withCredentials.fetch({
          repo: guarded.url,
          chart: "demo",
          version: "1.0.0",
        }),
      ),
    ).toMatchObject({ name: "demo", version: "1.0.0" });
  });

  it("fetches an archive URL, with the credentials of its prefix", async () => {
    const archive = `${open.url}/demo-1.2.0.tgz`;
    expect(fetched(await fetcher.fetch({ chart: archive }))).toMatchObject({
      name: "demo",
      version: "1.2.0",
    });
    const withCredentials = createHelmChartFetcher({
      helm,
      credentials: [{ url: guarded.url, ...AUTH }],
    });
    expect(
      fetched(
        await withCredentials.fetch({ chart: `${guarded.url}/demo-2.0.0.tgz` }),
      ).version,
    ).toBe("2.0.0");
    expect(
      refusal(await fetcher.fetch({ chart: `${open.url}/demo-9.9.9.tgz` })),
    ).toMatch(/does not exist/);
  });

  it("refuses a chart over the size limit, naming the chart and both sizes", async () => {
    const small = createHelmChartFetcher({ helm, maxBytes: 100 });
    const message = refusal(
      await small.fetch({ repo: open.url, chart: "demo", version: "1.0.0" }),
    );
    expect(message).toMatch(
      new RegExp(
        `^chart demo from ${open.url.replace(/\./g, "\\.")} version 1\\.0\\.0: its archive is \\d+ bytes, over the bundle content limit of 100 bytes$`,
      ),
    );
  });

  it("names the helm option when helm is missing", async () => {
    const none = createHelmChartFetcher({ helm: join(charts, "no-helm") });
    expect(
      refusal(await none.fetch({ repo: open.url, chart: "demo" })),
    ).toMatch(/: helm cannot run: .*--helm or FLOTILLA_HELM/);
  });
});

describe("fetching charts from an OCI registry with helm pull", () => {
  let charts: string;
  let open: OciRegistry;
  let guarded: OciRegistry;
  let helm: string;
  let fetcher: ChartFetcher;

  beforeAll(async () => {
    helm = await findTool("helm");
    charts = await mkdtemp(join(tmpdir(), "flotilla-oci-charts-"));
    for (const version of ["1.0.0", "1.2.0", "2.0.0"])
      await writeChart(charts, "demo", version);
    open = await startOciRegistry(charts);
    guarded = await startOciRegistry(charts, { auth: AUTH });
    // A registry on loopback speaks plain HTTP: the credentials file says so per URL prefix.
    fetcher = createHelmChartFetcher({
      helm,
      credentials: [{ url: `oci://${open.host}`, plainHttp: true }],
    });
  }, 60_000);

  afterAll(async () => {
    await open.stop();
    await guarded.stop();
    await rm(charts, { recursive: true, force: true });
  });

  it("fetches a chart by exact version, by a range and the newest, the same bytes each time", async () => {
    const chart = `${open.url}/demo`;
    const exact = fetched(await fetcher.fetch({ chart, version: "1.2.0" }));
    expect(exact).toMatchObject({ name: "demo", version: "1.2.0" });
    expect(firstEntryOf(exact.archive)).toMatch(/^demo\//);
    const again = fetched(await fetcher.fetch({ chart, version: "1.2.0" }));
    expect(Buffer.from(again.archive).equals(Buffer.from(exact.archive))).toBe(
      true,
    );
    expect(
      fetched(await fetcher.fetch({ chart, version: "^1.0.0" })).version,
    ).toBe("1.2.0");
    expect(fetched(await fetcher.fetch({ chart })).version).toBe("2.0.0");
  });

  it("names the reference when the version or the chart is missing", async () => {
    const version = refusal(
      await fetcher.fetch({ chart: `${open.url}/demo`, version: "3.0.0" }),
    );
    expect(version).toContain(`chart ${open.url}/demo version 3.0.0`);
    expect(version).toMatch(/the chart or that version does not exist/);
    const chart = refusal(
      await fetcher.fetch({ chart: `${open.url}/nope`, version: "1.0.0" }),
    );
    expect(chart).toContain(`chart ${open.url}/nope`);
    expect(chart).toMatch(/the chart or that version does not exist/);
  });

  it("is refused by a private registry without credentials, and pulls with them", async () => {
    const chart = `${guarded.url}/demo`;
    const plainOnly = createHelmChartFetcher({
      helm,
      credentials: [{ url: `oci://${guarded.host}`, plainHttp: true }],
    });
    expect(refusal(await plainOnly.fetch({ chart, version: "1.0.0" }))).toMatch(
      /refused the credentials/,
    );
    expect(guarded.refused()).toBeGreaterThan(0);
    const withCredentials = createHelmChartFetcher({
      helm,
      credentials: [{ url: `oci://${guarded.host}`, plainHttp: true, ...AUTH }],
    });
    expect(
      fetched(await withCredentials.fetch({ chart, version: "1.0.0" })),
    ).toMatchObject({
      name: "demo",
      version: "1.0.0",
    });
  });
});
