/**
 * The parts of core's documented preview outputs the renderers walk, derived from the exported
 * top-level shapes so the CLI depends only on those.
 */
import type { PlanOutput, SimulationOutput } from "@flotilla/core";

export type {
  PlanOutput,
  PlanWarning,
  SimulationOutput,
  TimelineEntry,
  UpgradePlan,
} from "@flotilla/core";
export type PlanWave = PlanOutput["waves"][number];
export type PlanGroup = PlanWave["groups"][number];
export type SimulatedWave = SimulationOutput["waves"][number];
export type SimulatedGroup = SimulatedWave["groups"][number];
export type SimulatedMember = SimulatedGroup["members"][number];
