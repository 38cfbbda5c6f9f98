/** The hub's version, from its package.json (replicas of other versions do not share work). */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

export const HUB_VERSION: string = (
  require("../package.json") as { version: string }
).version;
