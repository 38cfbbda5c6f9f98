/**
 * The real {@link CliIo}: this process's streams, file system, clock, environment and user. Only
 * the process entry builds it; tests build it too, with captured streams, when a command must read
 * a real directory.
 */
import { randomBytes } from "node:crypto";
import {
  chmod,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  writeFile,
} from "node:fs/promises";
import { userInfo } from "node:os";
import { basename, dirname, join } from "node:path";
import type { CliIo, DirEntry } from "./io.js";
import { compact } from "@flotilla/core";

/** Where the text a command writes goes. */
export interface ProcessIoStreams {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly isTTY: boolean;
  readonly columns?: number;
}

function osUserName(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry (some containers): the default actor is then left to the environment.
    return undefined;
  }
}

/** Writes `path` through a temporary file in the same directory, so readers never see half of it. */
async function writeAtomically(
  path: string,
  data: string | Uint8Array,
  mode: number,
): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = join(
    dir,
    `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`,
  );
  try {
    await writeFile(temporary, data, { mode, flag: "wx" });
    // The umask may have narrowed `mode` at creation; secrets must not be wider than asked.
    await chmod(temporary, mode);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** A CliIo over the real file system, clock and `env`, writing to `streams`. */
export function createProcessIo(
  streams: ProcessIoStreams,
  env: Readonly<Record<string, string | undefined>>,
): CliIo {
  const userName = osUserName() ?? env["USER"] ?? env["LOGNAME"];
  return {
    stdout: streams.stdout,
    stderr: streams.stderr,
    readFile: (path) => readFile(path, "utf8"),
    readBytes: (path) => readFile(path),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin)
        chunks.push(Buffer.from(chunk as Uint8Array));
      return Buffer.concat(chunks).toString("utf8");
    },
    writeFile: writeAtomically,
    readDir: async (path) =>
      (await readdir(path, { withFileTypes: true })).map((entry): DirEntry => ({
        name: entry.name,
        kind: entry.isFile()
          ? "file"
          : entry.isDirectory()
            ? "directory"
            : "other",
      })),
    isTTY: streams.isTTY,
    ...compact({ columns: streams.columns }),
    env,
    now: () => Date.now(),
    ...(userName === undefined || userName === "" ? {} : { userName }),
  };
}
