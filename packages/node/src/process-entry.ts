import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * Whether the module at `moduleUrl` (pass `import.meta.url`) is the script Node was started with,
 * so a `main.ts` runs its process only when executed, not when a test imports it. npm and pnpm
 * install bins as symlinks, so real paths are compared.
 */
export function isProcessEntry(
  moduleUrl: string,
  script: string | undefined = process.argv[1],
): boolean {
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}
