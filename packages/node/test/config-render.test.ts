import { onOff, option, renderOptions, text } from "@flotilla/node";
import { describe, expect, test } from "vitest";

describe("renderOptions", () => {
  test("pads the flag column and adds defaults, variables and groups", () => {
    const table = {
      listen: option({
        flag: "--listen",
        env: "APP_LISTEN",
        arg: "HOST:PORT",
        default: "127.0.0.1:80",
        help: "where to listen",
        group: "Network",
        parse: text,
      }),
      help: option({
        flag: "--help",
        short: "-h",
        help: "this text\nand nothing else",
        group: "Process",
        parse: onOff(),
      }),
    };
    expect(renderOptions(table, { column: 20 })).toEqual([
      "Network:",
      "  --listen HOST:PORT where to listen (default 127.0.0.1:80) [APP_LISTEN]",
      "",
      "Process:",
      "  --help             this text",
      "                     and nothing else",
    ]);
    expect(
      renderOptions(table, { column: 12, short: true, defaultsAndEnv: false }),
    ).toEqual([
      "Network:",
      "  --listen HOST:PORT where to listen",
      "",
      "Process:",
      "  -h, --help this text",
      "             and nothing else",
    ]);
  });

  test("a flag wider than the column is followed by the gap asked for", () => {
    const table = {
      long: option({ flag: "--a-long-flag", arg: "X", help: "h", parse: text }),
    };
    expect(renderOptions(table, { column: 4 })).toEqual([
      "  --a-long-flag X h",
    ]);
    expect(renderOptions(table, { column: 4, overflowGap: 2 })).toEqual([
      "  --a-long-flag X  h",
    ]);
  });
});
