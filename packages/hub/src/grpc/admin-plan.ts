/** AdminService: the server-side plan preview of a strategy or a bundle's rollout. */
import {
  FlotillaError,
  matchesSelector,
  parseSelectorString,
  planStaged,
  type LabelSelector,
  type PlanOutput,
} from "@flotilla/core";
import { parseStrategyJson } from "../strategies/update-strategies.js";
import type { Handlers, RunHandlerDeps } from "./admin-run-common.js";
import { requireName } from "./admin-fleet.js";
import { unary } from "./unary.js";

export function planHandlers(
  deps: RunHandlerDeps,
): Pick<Handlers, "PreviewPlan"> {
  return {
    PreviewPlan: unary((request) => {
      let selector: LabelSelector | undefined;
      if (request.labelSelector !== "") {
        const parsed = parseSelectorString(
          request.labelSelector,
          "labelSelector",
        );
        if (!parsed.ok)
          throw FlotillaError.invalid("preview request", parsed.problems);
        selector = parsed.value;
      }
      const clusters = deps.directory
        .clusters()
        .filter(
          (c) => selector === undefined || matchesSelector(selector, c.labels),
        );
      let plan: PlanOutput;
      switch (request.strategy) {
        case "bundle":
          plan = deps.previewBundle(
            requireName(request.bundle, "bundle", "preview request"),
          );
          break;
        case "updateStrategyName":
        case "strategyJson": {
          const strategy =
            request.strategy === "strategyJson"
              ? parseStrategyJson(request.strategyJson ?? "", "strategyJson")
              : deps.strategies.get(
                  requireName(
                    request.updateStrategyName,
                    "updateStrategyName",
                    "preview request",
                  ),
                ).strategy;
          const planned = planStaged(strategy, clusters);
          if (!planned.ok)
            throw FlotillaError.invalid("preview request", planned.problems);
          plan = planned.value;
          break;
        }
        case undefined:
          throw FlotillaError.invalid("preview request", [
            {
              path: "strategy",
              message: "set one of strategyJson, updateStrategyName or bundle",
            },
          ]);
      }
      return { planJson: JSON.stringify(plan) };
    }),
  };
}
