import { describe, expect, test } from "vitest";
import {
  NATS_SETUP_USAGE,
  parseNatsSetupArgs,
} from "../src/security/nats-setup-options.js";

const UNKNOWN = "unknown argument of nats-setup (see nats-setup --help)";

describe("parseNatsSetupArgs", () => {
  test("reads the flags; the last of a repeated flag wins", () => {
    expect(
      parseNatsSetupArgs([
        "--out",
        "a",
        "--out=b",
        "--resolver-dir",
        "/jwt",
        "--force",
      ]),
    ).toEqual({
      ok: true,
      value: {
        help: false,
        outDir: "b",
        accountName: undefined,
        resolverDir: "/jwt",
        fromDir: undefined,
        force: true,
      },
    });
  });

  test("help wins, in every spelling", () => {
    for (const argv of [["-h"], ["--bogus", "--help"], ["--help=1"]])
      expect(parseNatsSetupArgs(argv)).toEqual({
        ok: true,
        value: { help: true },
      });
  });

  test("names unknown arguments, missing values and the missing --out", () => {
    expect(
      parseNatsSetupArgs(["--force=x", "pos", "--account", "--from="]),
    ).toEqual({
      ok: false,
      problems: [
        { path: "--force", message: UNKNOWN, value: "--force=x" },
        { path: "argv", message: UNKNOWN, value: "pos" },
        { path: "--account", message: "needs a value: --account VALUE" },
        { path: "--from", message: "needs a value: --from VALUE" },
        { path: "--out", message: "is required: --out DIR" },
      ],
    });
    expect(parseNatsSetupArgs(["--out"])).toEqual({
      ok: false,
      problems: [{ path: "--out", message: "needs a value: --out VALUE" }],
    });
  });

  test("--account cannot be given with --from", () => {
    expect(
      parseNatsSetupArgs(["--out", "o", "--from", "old", "--account", "x"]),
    ).toEqual({
      ok: false,
      problems: [
        {
          path: "--account",
          message:
            "cannot be given with --from: the flotilla account is the one of --from",
          value: "x",
        },
      ],
    });
  });

  test("usage lists every flag", () => {
    expect(NATS_SETUP_USAGE).toContain(
      "  --resolver-dir DIR   where nats-server keeps account JWTs (default /data/jwt)",
    );
    expect(NATS_SETUP_USAGE).toContain(
      "                       JetStream data stays the hub's) and make every other key anew",
    );
  });
});
