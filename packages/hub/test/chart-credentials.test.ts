/**
 * The chart credentials file (bundles/chart-credentials.ts): entries parsed with a password or a
 * password file, problems naming the entry's field (never showing a password), and the entry of
 * the longest matching URL prefix chosen.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  credentialFor,
  loadChartCredentials,
  parseChartCredentials,
} from "../src/bundles/chart-credentials.js";

describe("the chart credentials file", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "flotilla-chart-creds-"));
    await writeFile(join(dir, "password"), "from-a-file\n");
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads entries, a passwordFile's content trimmed", async () => {
    const parsed = await parseChartCredentials(
      [
        "- url: https://charts.example.com/private",
        "  username: fleet",
        `  passwordFile: ${join(dir, "password")}`,
        "- url: oci://registry.example.com",
        "  username: robot",
        "  password: inline",
        "  plainHttp: true",
        "- url: https://public.example.com",
        "  insecureSkipTLSVerify: true",
      ].join("\n"),
      "creds.yaml",
    );
    expect(parsed).toEqual({
      ok: true,
      value: [
        {
          url: "https://charts.example.com/private",
          username: "fleet",
          password: "from-a-file",
        },
        {
          url: "oci://registry.example.com",
          username: "robot",
          password: "inline",
          plainHttp: true,
        },
        { url: "https://public.example.com", insecureSkipTLSVerify: true },
      ],
    });
  });

  it("names each bad field, never showing a password", async () => {
    const parsed = await parseChartCredentials(
      JSON.stringify([
        { url: "ftp://x", username: "a", password: "hidden-1" },
        { url: "https://y", password: 12345 },
        {
          url: "https://z",
          username: "b",
          password: "p",
          passwordFile: "/nonexistent",
        },
        { url: "https://w", username: "c", passwordFile: join(dir, "missing") },
        { url: "https://v", token: "t" },
      ]),
      "creds.json",
    );
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const paths = parsed.problems.map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "[0].url",
        "[1].password",
        "[2].passwordFile",
        "[4]",
      ]),
    );
    expect(JSON.stringify(parsed.problems)).not.toMatch(/hidden-1|12345/);
    const missing = await parseChartCredentials(
      JSON.stringify([
        { url: "https://w", username: "c", passwordFile: join(dir, "missing") },
      ]),
      "creds.json",
    );
    expect(missing).toMatchObject({
      ok: false,
      problems: [
        {
          path: "[0].passwordFile",
          message: "names a file that does not exist",
        },
      ],
    });
  });

  it("refuses text that is not YAML, and a file that is not there", async () => {
    expect(await parseChartCredentials("- url: [", "bad.yaml")).toMatchObject({
      ok: false,
      problems: [{ path: "bad.yaml" }],
    });
    expect(await loadChartCredentials(join(dir, "absent.yaml"))).toMatchObject({
      ok: false,
      problems: [{ message: "names a file that does not exist" }],
    });
  });

  it("applies the entry of the longest matching URL prefix", () => {
    const entries = [
      { url: "https://charts.example.com", username: "a", password: "1" },
      { url: "https://charts.example.com/team", username: "b", password: "2" },
    ];
    expect(
      credentialFor(entries, "https://charts.example.com/team/x-1.0.0.tgz")
        ?.username,
    ).toBe("b");
    expect(
      credentialFor(entries, "https://charts.example.com/other")?.username,
    ).toBe("a");
    expect(
      credentialFor(entries, "https://elsewhere.example.com"),
    ).toBeUndefined();
  });
});
