/**
 * Reading a bundle directory: one reader for the CLI and the hub, in @flotilla/node (the walk, the
 * renderer rule and fleet.yaml's checks: docs/bundles.md). Re-exported here for the commands.
 */
export {
  bundleRenderer,
  FLEET_YAML,
  type BundleDir,
  type BundleRenderer,
  type ManifestFile,
} from "@flotilla/core";
export { readBundleDir, readRendererFiles } from "@flotilla/node";
