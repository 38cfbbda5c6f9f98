/** The kinds of operator releases on the wire (catalogue.proto, docs/engine.md#the-version-catalogue). */
import { enumCodec } from "./enum-codec.js";

/** `kubernetes` / `node-image` ↔ RELEASE_KIND_*. */
export const RELEASE_KIND = enumCodec({
  kubernetes: "RELEASE_KIND_KUBERNETES",
  "node-image": "RELEASE_KIND_NODE_IMAGE",
} as const);

/** The domain spelling of a release kind. */
export type ReleaseKindName = (typeof RELEASE_KIND.values)[number];
