/** Checks on files that options name. */
import { accessSync, constants, statSync } from "node:fs";

/** Why `file` cannot be read as a regular file, or undefined when it can. */
export function unreadableFile(file: string): string | undefined {
  try {
    if (!statSync(file).isFile()) return "must be a regular file";
    accessSync(file, constants.R_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT"
      ? "names a file that does not exist"
      : `cannot be read (${code ?? String(error)})`;
  }
}
