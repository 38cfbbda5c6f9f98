import {
  byteSize,
  fileContent,
  oneOf,
  onOff,
  parseByteSize,
  wholeNumber,
} from "@flotilla/node";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";

describe("value parsers", () => {
  test("byte sizes: bytes or binary units, never decimal ones", () => {
    expect(parseByteSize("512MiB")).toBe(512 * 1024 ** 2);
    expect(parseByteSize("2Gi")).toBe(2 * 1024 ** 3);
    expect(parseByteSize("1GB")).toBeUndefined();
    expect(byteSize(1024, "too small")("1KiB")).toEqual({
      ok: true,
      value: 1024,
    });
    expect(byteSize(1024, "too small")("1000")).toMatchObject({ ok: false });
  });

  test("whole numbers within bounds and digits", () => {
    expect(wholeNumber(1, 100, 3)("100")).toEqual({ ok: true, value: 100 });
    expect(wholeNumber(1, 100, 3)("0001")).toMatchObject({ ok: false });
    expect(wholeNumber(1, 100)("-1")).toEqual({
      ok: false,
      problems: [{ path: "", message: "must be a whole number from 1 to 100" }],
    });
  });

  test("switches and choices", () => {
    expect(onOff()("Yes")).toEqual({ ok: true, value: true });
    expect(onOff()("maybe")).toMatchObject({
      ok: false,
      problems: [
        { message: expect.stringMatching(/^Invalid option/) as string },
      ],
    });
    expect(oneOf(["a", "b"])("c")).toMatchObject({
      problems: [{ message: "must be one of a, b" }],
    });
  });

  test("file content is read; a missing file is named as such", async () => {
    const dir = await mkdtemp(join(tmpdir(), "flotilla-node-config-"));
    try {
      const file = join(dir, "token");
      await writeFile(file, "secret\n");
      expect(fileContent(file)).toEqual({
        ok: true,
        value: { file, content: "secret\n" },
      });
      expect(fileContent(join(dir, "none"))).toMatchObject({
        problems: [{ message: "names a file that does not exist" }],
      });
      expect(fileContent(dir)).toMatchObject({
        problems: [{ message: "must be a regular file" }],
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
