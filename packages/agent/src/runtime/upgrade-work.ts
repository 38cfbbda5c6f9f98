/**
 * Performing the intent's upgrade (docs/semantics.md#upgrades and
 * docs/semantics.md#maintenance-windows): the agent enforces its owner's maintenance window itself,
 * whatever the hub decided. While the window is closed the item is Pending with the next opening,
 * and starts by itself when the window opens (or when the windows change); then the driver runs it,
 * reporting Applying with its progress, and it ends Ready or Failed.
 */
import { FlotillaError, showValue, compact } from "@flotilla/core";
import {
  checkWindow,
  upgradeScope,
  type WindowHold,
} from "../upgrade/check-window.js";
import { plainStatus, type UpgradeItem } from "./item-status.js";
import type { WorkContext } from "./work-context.js";

/** Longest wait before the window is checked again when no opening is in sight. */
const RECHECK_MS = 3_600_000;

/** Shortest wait between checks, should an opening in the past ever be reported. */
const MIN_WAIT_MS = 1_000;

/** Runs `item` to Ready or Failed; resolves early when its work is aborted. */
export async function runUpgradeItem(
  ctx: WorkContext,
  item: UpgradeItem,
): Promise<void> {
  const { signal } = item.work;
  const { run, type, target } = item.upgrade;
  const scope = upgradeScope(type);
  for (;;) {
    if (signal.aborted) return;
    const hold = checkWindow(
      ctx.backend.windows.current().maintenance,
      scope,
      ctx.clock.now(),
    );
    if (hold !== undefined) {
      pending(ctx, item, hold);
      if (!(await untilWindowMayOpen(ctx, hold, signal))) return;
      continue;
    }
    ctx.setStatus(
      item,
      plainStatus("Applying", ctx.clock.now(), {
        progressPercent: 0,
        message: `Starting the ${type} upgrade`,
      }),
    );
    const startedAtMs = ctx.clock.now();
    let outcome;
    try {
      outcome = await ctx.backend.upgrades.start(
        { run, type, target },
        {
          signal,
          onProgress: (progress) => {
            if (signal.aborted) return;
            ctx.setStatus(
              item,
              plainStatus("Applying", ctx.clock.now(), {
                progressPercent: progress.percent,
                message: progress.message,
              }),
            );
          },
        },
      );
    } catch (caught) {
      if (signal.aborted) return;
      const error = FlotillaError.from(caught);
      ctx.log.warn({ err: error, run }, "Upgrade driver failed");
      outcome = {
        type: "Failed" as const,
        reason: "UpgradeFailed" as const,
        message: `Cannot upgrade for run ${showValue(run)}: ${error.message}`,
      };
    }
    if (signal.aborted) return;
    const durationMs = ctx.clock.now() - startedAtMs;
    switch (outcome.type) {
      case "Succeeded":
        ctx.metrics.upgradeFinished("Succeeded", durationMs);
        ctx.setStatus(
          item,
          plainStatus("Ready", ctx.clock.now(), { message: outcome.message }),
        );
        ctx.factsChanged();
        return;
      case "Failed":
        ctx.metrics.upgradeFinished("Failed", durationMs);
        ctx.setStatus(
          item,
          plainStatus("Failed", ctx.clock.now(), {
            error: outcome.message,
            message: outcome.reason,
          }),
        );
        return;
      case "Pending":
        // The driver saw the window close between our check and its start.
        pending(ctx, item, outcome);
        if (!(await untilWindowMayOpen(ctx, outcome, signal))) return;
        continue;
      default: {
        const unreachable: never = outcome;
        return unreachable;
      }
    }
  }
}

function pending(ctx: WorkContext, item: UpgradeItem, hold: WindowHold): void {
  ctx.setStatus(
    item,
    plainStatus("Pending", ctx.clock.now(), {
      message: hold.message,
      ...compact({ pendingUntilMs: hold.pendingUntilMs }),
    }),
  );
}

/**
 * Waits until the hold's next opening, or until the owner's windows change (an opening may have
 * moved closer). False when the item's work was aborted meanwhile.
 */
async function untilWindowMayOpen(
  ctx: WorkContext,
  hold: Pick<WindowHold, "pendingUntilMs">,
  signal: AbortSignal,
): Promise<boolean> {
  const changed = new AbortController();
  const wake = AbortSignal.any([signal, changed.signal]);
  const unwatch = ctx.backend.windows.watch(
    () => {
      changed.abort();
    },
    { signal: wake },
  );
  const waitMs =
    hold.pendingUntilMs === undefined
      ? RECHECK_MS
      : Math.max(MIN_WAIT_MS, hold.pendingUntilMs - ctx.clock.now());
  try {
    await ctx.clock.sleep(waitMs, { signal: wake });
  } catch {
    // woken by a windows change, or aborted: told apart below
  } finally {
    unwatch();
    changed.abort();
  }
  return !signal.aborted;
}
