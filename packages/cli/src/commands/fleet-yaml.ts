/**
 * The fleet.yaml of a bundle directory, checked with core's bundle-spec parser (the one the hub
 * uses) so that mistakes are reported with fleet.yaml's own field paths before anything is sent.
 */
export { parseFleetYaml, type FleetYaml } from "@flotilla/core";
