import {
  duration,
  gatherOptions,
  list,
  onOff,
  option,
  readOptions,
  text,
  wholeNumber,
} from "@flotilla/node";
import { describe, expect, test } from "vitest";

const TABLE = {
  port: option({
    flag: "--port",
    env: "APP_PORT",
    arg: "N",
    default: "8080",
    help: "the port",
    parse: wholeNumber(1, 65535),
  }),
  name: option({
    flag: "--name",
    env: "APP_NAME",
    arg: "NAME",
    help: "the name",
    parse: text,
  }),
  tick: option({
    flag: "--tick",
    arg: "DURATION",
    default: "1s",
    help: "how often",
    parse: duration(100, 3_600_000),
  }),
  peers: option({
    flag: "--peers",
    env: "APP_PEERS",
    arg: "A[,B...]",
    help: "peers",
    parse: list(text),
  }),
  verbose: option({
    flag: "--verbose",
    env: "APP_VERBOSE",
    help: "say more",
    parse: onOff(),
  }),
  help: option({ flag: "--help", short: "-h", help: "help", parse: onOff() }),
};

describe("readOptions", () => {
  test("parses flags in both spellings, defaults, lists and switches", () => {
    const read = readOptions(
      TABLE,
      ["--name", "a", "--peers=x, y", "--verbose", "-h"],
      {},
    );
    expect(read.ok && read.value.values).toEqual({
      port: 8080,
      name: "a",
      tick: 1000,
      peers: ["x", "y"],
      verbose: true,
      help: true,
    });
    expect(read.ok && read.value.sources.port).toEqual({
      text: "8080",
      from: "the default of --port",
      defaulted: true,
    });
  });

  test("falls back to the environment, a flag beats its variable, an empty variable is unset", () => {
    const read = readOptions(TABLE, ["--port", "9000"], {
      APP_PORT: "7000",
      APP_NAME: "from-env",
      APP_PEERS: "",
      APP_VERBOSE: "off",
    });
    expect(read.ok && read.value.values).toEqual({
      port: 9000,
      name: "from-env",
      tick: 1000,
      verbose: false,
    });
    expect(read.ok && read.value.sources.name?.from).toBe("APP_NAME");
  });

  test("a bad whole number names where it came from, both spellings and the value", () => {
    expect(readOptions(TABLE, [], { APP_PORT: "70000" })).toEqual({
      ok: false,
      problems: [
        {
          path: "APP_PORT",
          message:
            "must be a whole number from 1 to 65535 (--port or APP_PORT)",
          value: "70000",
        },
      ],
    });
    expect(readOptions(TABLE, ["--tick=5"], {})).toEqual({
      ok: false,
      problems: [
        {
          path: "--tick",
          message:
            "must be a duration from 100ms to 1h, like 500ms, 10s or 1m (--tick)",
          value: "5",
        },
      ],
    });
  });

  test("refuses unknown flags with a suggestion, stray arguments, missing and repeated values", () => {
    const read = readOptions(
      TABLE,
      [
        "--nmae",
        "x",
        "--port",
        "1",
        "--port",
        "2",
        "--name",
        "--verbose",
        "--tick",
      ],
      {},
    );
    expect(read.ok ? [] : read.problems).toEqual([
      {
        path: "--nmae",
        message: "unknown flag; did you mean --name? (see --help)",
        value: "--nmae",
      },
      {
        path: "argv",
        message: "unexpected argument (see --help)",
        value: "x",
      },
      { path: "--port", message: "is given more than once", value: "2" },
      { path: "--name", message: "needs a value: --name NAME" },
      { path: "--tick", message: "needs a value: --tick DURATION" },
    ]);
  });

  test("a flag after a flag that needs a value is read as a flag, and `--` does not end the flags", () => {
    const gathered = gatherOptions(
      TABLE,
      ["--name", "--verbose", "--", "--port", "9"],
      {},
    );
    expect(gathered.values).toMatchObject({ verbose: true, port: 9 });
    expect(gathered.problems.map((p) => [p.path, p.message])).toEqual([
      ["--name", "needs a value: --name NAME"],
      ["--", "unknown flag (see --help)"],
    ]);
  });

  test("wording, retired flags, empty values, repeats and required options are the caller's to choose", () => {
    const table = {
      out: option({
        flag: "--out",
        arg: "DIR",
        required: true,
        help: "where",
        parse: text,
      }),
    };
    const settings = {
      positional: "not an argument",
      unknownFlag: () => "not a flag",
      retiredFlags: { "--old": "use --out" },
      missingValue: () => "needs a value: --out VALUE",
      emptyValue: "missing" as const,
      repeated: "last" as const,
    };
    expect(
      readOptions(table, ["--out", "a", "--out=b"], {}, settings),
    ).toMatchObject({
      ok: true,
      value: { values: { out: "b" } },
    });
    const read = readOptions(
      table,
      ["x", "--bad", "--old=1", "--out="],
      {},
      settings,
    );
    expect(read.ok ? [] : read.problems).toEqual([
      { path: "argv", message: "not an argument", value: "x" },
      { path: "--bad", message: "not a flag", value: "--bad" },
      { path: "--old", message: "use --out", value: "--old=1" },
      { path: "--out", message: "needs a value: --out VALUE" },
    ]);
    const missing = readOptions(table, [], {}, settings);
    expect(missing.ok ? [] : missing.problems).toEqual([
      { path: "--out", message: "is required: --out DIR" },
    ]);
  });

  test("grouped one-letter flags are not read apart", () => {
    const read = readOptions(TABLE, ["-hx"], {});
    expect(read.ok ? [] : read.problems.map((p) => p.path)).toEqual(["-hx"]);
  });
});

describe("readOptions, strict and lenient readings", () => {
  const table = {
    label: option({
      flag: "--label",
      env: "APP_LABELS",
      arg: "K=V",
      repeatable: true,
      help: "a label",
      parse: text,
    }),
    name: option({
      flag: "--name",
      env: "APP_NAME",
      arg: "NAME",
      help: "the name",
      parse: text,
    }),
  };

  test("strict: parseArgs' first error is the only problem", () => {
    expect(readOptions(table, ["--bogus", "x"], {}, { strict: true })).toEqual({
      ok: false,
      problems: [{ path: "argv", message: "Unknown option '--bogus'" }],
    });
  });

  test("a repeatable flag joins its values; empty values may count as unset; variables may be trimmed", () => {
    const read = readOptions(
      table,
      ["--label", "a=1", "--label=b=2", "--name="],
      { APP_NAME: "  env  " },
      { emptyValue: "unset", trimEnv: true },
    );
    expect(read.ok && read.value.values).toEqual({
      label: "a=1,b=2",
      name: "env",
    });
  });
});
