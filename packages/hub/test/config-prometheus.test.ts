import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { formatProblem, type Problem } from "@flotilla/core";
import {
  HUB_USAGE,
  parseHubConfig,
  type HubConfig,
} from "../src/config/config.js";

const PLAIN = ["--insecure-plaintext"];
const TOKEN = "eyJhbGciOi.token-Zq9";

function parsed(
  argv: readonly string[],
  env: Record<string, string> = {},
): HubConfig {
  const result = parseHubConfig([...PLAIN, ...argv], env);
  if (!result.ok)
    throw new Error(result.problems.map(formatProblem).join("\n"));
  return result.value;
}

function problems(
  argv: readonly string[],
  env: Record<string, string> = {},
): readonly Problem[] {
  const result = parseHubConfig([...PLAIN, ...argv], env);
  if (result.ok) throw new Error("expected problems, got a config");
  return result.problems;
}

let dir: string;
let tokenFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flotilla-hub-prometheus-config-"));
  tokenFile = join(dir, "token");
  await writeFile(tokenFile, `${TOKEN}\n`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the --prometheus-* options", () => {
  test("without --prometheus-url there is no Prometheus", () => {
    expect(parsed([])).toMatchObject({ prometheus: undefined });
  });

  test("a URL alone takes the default timeout and size", () => {
    expect(
      parsed(["--prometheus-url", "http://prometheus:9090"]),
    ).toMatchObject({
      prometheus: {
        url: "http://prometheus:9090",
        timeoutMs: 10_000,
        maxBytes: 1024 * 1024,
      },
    });
    const config = parsed(["--prometheus-url=https://mon.example/prom/"]);
    expect(config.help ? undefined : config.prometheus).toEqual({
      url: "https://mon.example/prom/",
      timeoutMs: 10_000,
      maxBytes: 1024 * 1024,
    });
  });

  test("reads every option from flags or variables; the token file's trailing newline is trimmed", () => {
    expect(
      parsed(
        [
          "--prometheus-timeout",
          "30s",
          "--prometheus-bearer-token-file",
          tokenFile,
        ],
        {
          FLOTILLA_PROMETHEUS_URL: "http://prometheus:9090",
          FLOTILLA_PROMETHEUS_MAX_BYTES: "4MiB",
          FLOTILLA_PROMETHEUS_TIMEOUT: "1m",
        },
      ),
    ).toMatchObject({
      prometheus: {
        url: "http://prometheus:9090",
        bearerToken: TOKEN,
        timeoutMs: 30_000,
        maxBytes: 4 * 1024 * 1024,
      },
    });
    expect(
      parsed([], {
        FLOTILLA_PROMETHEUS_URL: "http://prometheus:9090",
        FLOTILLA_PROMETHEUS_BEARER_TOKEN_FILE: tokenFile,
        FLOTILLA_PROMETHEUS_TIMEOUT: "5m",
        FLOTILLA_PROMETHEUS_MAX_BYTES: "1KiB",
      }),
    ).toMatchObject({
      prometheus: { bearerToken: TOKEN, timeoutMs: 300_000, maxBytes: 1024 },
    });
  });

  test.each([
    [
      "--prometheus-timeout",
      "999ms",
      "must be a duration from 1s to 5m, like 10s or 1m (--prometheus-timeout or FLOTILLA_PROMETHEUS_TIMEOUT)",
    ],
    [
      "--prometheus-timeout",
      "6m",
      "must be a duration from 1s to 5m, like 10s or 1m (--prometheus-timeout or FLOTILLA_PROMETHEUS_TIMEOUT)",
    ],
    [
      "--prometheus-timeout",
      "soon",
      "must be a duration from 1s to 5m, like 10s or 1m (--prometheus-timeout or FLOTILLA_PROMETHEUS_TIMEOUT)",
    ],
    [
      "--prometheus-max-bytes",
      "1023",
      "must be a size from 1KiB to 64MiB: bytes, or a number with KiB or MiB, like 1MiB (--prometheus-max-bytes or FLOTILLA_PROMETHEUS_MAX_BYTES)",
    ],
    [
      "--prometheus-max-bytes",
      "65MiB",
      "must be a size from 1KiB to 64MiB: bytes, or a number with KiB or MiB, like 1MiB (--prometheus-max-bytes or FLOTILLA_PROMETHEUS_MAX_BYTES)",
    ],
    [
      "--prometheus-max-bytes",
      "1MB",
      "must be a size from 1KiB to 64MiB: bytes, or a number with KiB or MiB, like 1MiB (--prometheus-max-bytes or FLOTILLA_PROMETHEUS_MAX_BYTES)",
    ],
  ])("refuses %s %s, naming the flag and the value", (flag, value, message) => {
    expect(
      problems(["--prometheus-url", "http://prometheus:9090", flag, value]),
    ).toEqual([{ path: flag, message, value }]);
  });

  test.each([
    [
      "prometheus:9090",
      "must be an http:// or https:// URL, like http://prometheus:9090",
    ],
    [
      "ftp://prometheus",
      "must be an http:// or https:// URL, like http://prometheus:9090",
    ],
    [
      "not a url",
      "must be an http:// or https:// URL, like http://prometheus:9090",
    ],
    [
      "http://prometheus:9090/?org=1",
      "must have no query (?) and no fragment (#): the hub adds /api/v1/query to it",
    ],
  ])("refuses the URL %s", (url, message) => {
    expect(problems(["--prometheus-url", url])).toEqual([
      {
        path: "--prometheus-url",
        message: `${message} (--prometheus-url or FLOTILLA_PROMETHEUS_URL)`,
        value: url,
      },
    ]);
  });

  test("refuses a URL with credentials without repeating them", () => {
    const found = problems([], {
      FLOTILLA_PROMETHEUS_URL: "https://admin:hunter2@prometheus:9090",
    });
    expect(found).toEqual([
      {
        path: "FLOTILLA_PROMETHEUS_URL",
        message:
          "must not hold credentials: put the bearer token in --prometheus-bearer-token-file (--prometheus-url or FLOTILLA_PROMETHEUS_URL)",
        value: "https://[redacted]@prometheus:9090",
      },
    ]);
    expect(JSON.stringify(found)).not.toContain("hunter2");
  });

  test("refuses a token file that is missing, unreadable, empty or not one token, without quoting it", async () => {
    const empty = join(dir, "empty");
    await writeFile(empty, "\n");
    const twoLines = join(dir, "two-lines");
    await writeFile(twoLines, `${TOKEN}\nsecond-Zq9\n`);
    const spaced = join(dir, "spaced");
    await writeFile(spaced, "Bearer abc-Zq9\n");
    const locked = join(dir, "locked");
    await writeFile(locked, TOKEN);
    await chmod(locked, 0o000);
    const url = ["--prometheus-url", "http://prometheus:9090"];
    const messageOf = (file: string): string => {
      const found = problems([...url, "--prometheus-bearer-token-file", file]);
      expect(JSON.stringify(found)).not.toContain("Zq9");
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({
        path: "--prometheus-bearer-token-file",
        value: file,
      });
      return found[0]?.message ?? "";
    };
    const suffix =
      " (--prometheus-bearer-token-file or FLOTILLA_PROMETHEUS_BEARER_TOKEN_FILE)";
    expect(messageOf(join(dir, "missing"))).toBe(
      `names a file that does not exist${suffix}`,
    );
    expect(messageOf(dir)).toBe(`must be a regular file${suffix}`);
    expect(messageOf(empty)).toBe(`names an empty file${suffix}`);
    expect(messageOf(twoLines)).toBe(
      `holds more than one line: it must hold the token alone${suffix}`,
    );
    expect(messageOf(spaced)).toBe(
      `holds a space or a character that is not printable ASCII: an HTTP header cannot carry it${suffix}`,
    );
    // root reads any file: the permission check means nothing then.
    if (process.getuid?.() !== 0)
      expect(messageOf(locked)).toBe(`cannot be read (EACCES)${suffix}`);
  });

  test("a token file needs the URL it is for", () => {
    expect(problems(["--prometheus-bearer-token-file", tokenFile])).toEqual([
      {
        path: "--prometheus-bearer-token-file",
        message:
          "needs --prometheus-url or FLOTILLA_PROMETHEUS_URL: the token is sent to that URL (--prometheus-bearer-token-file or FLOTILLA_PROMETHEUS_BEARER_TOKEN_FILE)",
        value: tokenFile,
      },
    ]);
  });

  test("usage lists the options with their variables and defaults", () => {
    for (const text of [
      "--prometheus-url URL",
      "[FLOTILLA_PROMETHEUS_URL]",
      "--prometheus-bearer-token-file FILE",
      "--prometheus-timeout DURATION",
      "--prometheus-max-bytes SIZE",
      "(default 1MiB)",
    ])
      expect(HUB_USAGE).toContain(text);
  });
});
