/**
 * The admin token file: what it accepts, how a bad one is reported (path and value, never a
 * token), and reloading when it changes, keeping the last good version when a new one is bad.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FlotillaError } from "@flotilla/core";
import { waitFor } from "@flotilla/testkit";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  findAdminToken,
  loadAdminTokens,
  parseAdminTokenFile,
  tokenDigest,
} from "../src/security/admin-tokens.js";

const SECRET = "alice-secret-0123456789";
const SECRET_SHA = tokenDigest(SECRET).toString("hex");

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flotilla-admin-tokens-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function problemsOf(text: string) {
  try {
    parseAdminTokenFile(text, "tokens.yaml");
  } catch (error) {
    if (error instanceof FlotillaError) return error;
  }
  throw new Error("expected the file to be refused");
}

/** A pino logger whose records are kept in `lines`. */
function recordingLogger() {
  const lines: { level: number; msg: string; names?: string[] }[] = [];
  const logger = pino(
    { level: "info" },
    {
      write: (line: string) => {
        lines.push(JSON.parse(line) as (typeof lines)[number]);
      },
    },
  );
  return { logger, lines };
}

describe("parseAdminTokenFile", () => {
  it("reads hashed and clear tokens, and finds a caller by token", () => {
    const parsed = parseAdminTokenFile(
      `- name: alice\n  role: admin\n  tokenSha256: ${SECRET_SHA.toUpperCase()}\n` +
        `- name: ci-pipeline\n  role: operator\n  token: ci-secret-0123456789\n`,
      "tokens.yaml",
    );
    expect(parsed.clearTokenNames).toEqual(["ci-pipeline"]);
    expect(findAdminToken(parsed.entries, SECRET)).toEqual({
      kind: "admin",
      name: "alice",
      role: "admin",
      via: "token",
    });
    expect(findAdminToken(parsed.entries, "ci-secret-0123456789")?.role).toBe(
      "operator",
    );
    expect(findAdminToken(parsed.entries, "ci-secret-01234567890")).toBe(
      undefined,
    );
  });

  it("takes an empty file as no tokens", () => {
    expect(parseAdminTokenFile("", "tokens.yaml").entries).toEqual([]);
  });

  it("names the file, each field's path and its value; never a token in clear", () => {
    const error = problemsOf(
      `- name: Alice\n  role: root\n  tokenSha256: abc\n` +
        `- name: bob\n  role: viewer\n  token: "short"\n` +
        `- name: carol\n  role: viewer\n` +
        `- name: bob\n  role: viewer\n  tokenSha256: ${SECRET_SHA}\n  extra: 1\n`,
    );
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toMatch(/^Invalid admin token file "tokens.yaml": /);
    expect(error.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "[0].name", value: "Alice" }),
        {
          path: "[0].role",
          message: "must be one of viewer, operator, admin",
          value: "root",
        },
        {
          path: "[0].tokenSha256",
          message: "must be 64 hexadecimal digits (SHA-256)",
          value: "abc",
        },
        {
          path: "[1].token",
          message: "must be 16 to 1024 of A-Z, a-z, 0-9, ., _, ~, +, /, =, -",
        },
        {
          path: "[2].tokenSha256",
          message: "give exactly one of tokenSha256 (preferred) or token",
        },
        { path: "[3]", message: 'Unrecognized key: "extra"' },
      ]),
    );
    expect(error.message).not.toContain("short");
  });

  it("refuses two entries with one name", () => {
    const error = problemsOf(
      `- name: bob
  role: viewer
  tokenSha256: ${SECRET_SHA}
` +
        `- name: bob
  role: admin
  token: bob-secret-0123456789
`,
    );
    expect(error.problems).toEqual([
      {
        path: "[1].name",
        message: "is used by an earlier entry",
        value: "bob",
      },
    ]);
    expect(error.message).not.toContain("bob-secret");
  });

  it("refuses a file that is not YAML or not a list", () => {
    expect(problemsOf("- name: [unclosed").message).toMatch(
      /^Cannot read admin token file "tokens.yaml": not YAML/,
    );
    expect(problemsOf("name: alice").problems).toEqual([
      expect.objectContaining({ path: "" }),
    ]);
  });
});

describe("loadAdminTokens", () => {
  it("rejects a bad first file with its problems", async () => {
    const file = join(dir, "bad.yaml");
    await writeFile(
      file,
      "- name: x\n  role: god\n  token: abcdefghijklmnopq\n",
    );
    await expect(
      loadAdminTokens({ file, logger: pino({ level: "silent" }) }),
    ).rejects.toThrow(
      /\[0\]\.role: must be one of viewer, operator, admin \(got "god"\)/,
    );
    await expect(
      loadAdminTokens({
        file: join(dir, "missing.yaml"),
        logger: pino({ level: "silent" }),
      }),
    ).rejects.toThrow(/Cannot read admin token file ".*missing.yaml": ENOENT/);
  });

  it("warns about tokens in clear", async () => {
    const file = join(dir, "clear.yaml");
    await writeFile(
      file,
      "- name: ci\n  role: viewer\n  token: ci-secret-0123456789\n",
    );
    const { logger, lines } = recordingLogger();
    await loadAdminTokens({ file, logger });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        names: ["ci"],
        msg: "Admin token file holds tokens in clear: store tokenSha256 instead",
      }),
    );
  });

  it("picks up a rotated token without a restart, and keeps the last good version when the new one is bad", async () => {
    const file = join(dir, "rotate.yaml");
    await writeFile(
      file,
      `- name: alice\n  role: admin\n  tokenSha256: ${SECRET_SHA}\n`,
    );
    const controller = new AbortController();
    const { logger, lines } = recordingLogger();
    const tokens = await loadAdminTokens({
      file,
      logger,
      pollIntervalMs: 20,
      signal: controller.signal,
    });
    try {
      expect(tokens.lookup(SECRET)?.name).toBe("alice");
      const rotated = "alice-rotated-0123456789";
      await writeFile(
        file,
        `- name: alice\n  role: viewer\n  tokenSha256: ${tokenDigest(rotated).toString("hex")}\n`,
      );
      await waitFor(() => tokens.lookup(rotated) !== undefined, {
        timeoutMs: 5_000,
      });
      expect(tokens.lookup(SECRET)).toBeUndefined();
      expect(tokens.lookup(rotated)?.role).toBe("viewer");

      await writeFile(file, "- name: alice\n  role: nobody\n");
      await waitFor(
        () =>
          lines.some(
            (l) =>
              l.msg ===
              "Admin token file refused: keeping the last good version",
          ),
        { timeoutMs: 5_000 },
      );
      expect(tokens.lookup(rotated)?.role).toBe("viewer");
      expect(tokens.size).toBe(1);
    } finally {
      controller.abort();
    }
  });
});
