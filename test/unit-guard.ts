/**
 * Setup file of the unit project (vitest.config.ts): unit tests run in seconds with no build and
 * no binaries, so none may start a process. A test that tries fails here with a message saying
 * where it belongs, instead of passing slowly or failing on a machine without nats-server.
 */
import { createRequire, syncBuiltinESMExports } from "node:module";

// The CommonJS module object: its properties are what ESM imports of node:child_process see once
// syncBuiltinESMExports() runs.
const childProcess = createRequire(import.meta.url)(
  "node:child_process",
) as Record<string, unknown>;

const refuse = (name: string) => (): never => {
  throw new Error(
    `${name}: unit tests start no processes; list this test file in the e2e project of vitest.config.ts`,
  );
};

for (const name of [
  "spawn",
  "spawnSync",
  "exec",
  "execSync",
  "execFile",
  "execFileSync",
  "fork",
] as const) {
  Object.defineProperty(childProcess, name, {
    value: refuse(name),
    configurable: true,
    writable: true,
  });
}
syncBuiltinESMExports();
