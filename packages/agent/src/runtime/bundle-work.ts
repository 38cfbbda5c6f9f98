/**
 * Applying one bundle revision (docs/agent-protocol.md, "Bundle content"): fetch the content by
 * its digest, check it is the revision the intent names, hand it to the gateway. The statuses
 * after Applied (NotReady, Ready, Modified) come from the gateway's watch, which the agent routes
 * to the item; this function reports Applying, and Failed when the content cannot be had.
 */
import { compact, FlotillaError, showValue } from "@flotilla/core";
import { createBackoff } from "@flotilla/node";
import { helmReleaseNamespace } from "@flotilla/protocol";
import {
  bundleItemStatus,
  plainStatus,
  type BundleItem,
} from "./item-status.js";
import type { WorkContext } from "./work-context.js";

/** Fetch errors worth retrying: the object store is there, just not reachable right now. */
function isTransient(error: FlotillaError): boolean {
  return error.code === "unavailable" || error.code === "deadline_exceeded";
}

/**
 * Runs the apply of `item` after `before` (a removal of the same bundle still in flight). Resolves
 * when the gateway answered Applied or Failed, or when the item's work is aborted.
 */
export async function applyBundleItem(
  ctx: WorkContext,
  item: BundleItem,
  before: Promise<void> = Promise.resolve(),
): Promise<void> {
  const { signal } = item.work;
  const what = `Cannot apply bundle ${showValue(item.name)} revision ${showValue(item.revision)}`;
  const failed = (error: string): void => {
    ctx.setStatus(item, plainStatus("Failed", ctx.clock.now(), { error }));
  };
  ctx.setStatus(
    item,
    plainStatus("Applying", ctx.clock.now(), {
      message: "Fetching the bundle content",
    }),
  );
  const startedAtMs = ctx.clock.now();
  const finished = (outcome: "Applied" | "Failed"): void => {
    ctx.metrics.applyFinished(outcome, ctx.clock.now() - startedAtMs);
  };
  await before;
  const backoff = createBackoff({ random: ctx.random, maxMs: 10_000 });
  let content;
  for (;;) {
    if (signal.aborted) return;
    try {
      content = await ctx.fetchContent(item, { signal });
      break;
    } catch (caught) {
      if (signal.aborted) return;
      const error = FlotillaError.from(caught);
      if (!isTransient(error)) {
        ctx.log.warn(
          { err: error, bundle: item.name, revision: item.revision },
          "Cannot fetch bundle content",
        );
        failed(`${what}: ${error.message}`);
        finished("Failed");
        return;
      }
      ctx.log.debug({ err: error }, "Bundle content unavailable; retrying");
      try {
        await ctx.clock.sleep(backoff.next(), { signal });
      } catch {
        return;
      }
    }
  }
  if (content.bundle !== item.name || content.revision !== item.revision) {
    failed(
      `${what}: the content at ${item.digest} is bundle ${showValue(content.bundle)} revision ${showValue(content.revision)}`,
    );
    finished("Failed");
    return;
  }
  let manifests = content.resources;
  let namespace = content.namespace;
  if (content.helm !== undefined) {
    if (ctx.backend.renderHelm === undefined) {
      failed(
        `${what}: it is a Helm chart, and this agent's backend does not render Helm charts (docs/bundles.md#helm-bundles)`,
      );
      finished("Failed");
      return;
    }
    try {
      manifests = await ctx.backend.renderHelm(
        { ...content, helm: content.helm },
        { signal },
      );
      namespace = helmReleaseNamespace({ ...content, helm: content.helm });
    } catch (caught) {
      if (signal.aborted) return;
      const error = FlotillaError.from(caught);
      ctx.log.warn({ err: error, bundle: item.name }, "Helm render failed");
      failed(`${what}: ${error.message}`);
      finished("Failed");
      return;
    }
  }
  let result;
  ctx.gatewayOwns(item);
  try {
    result = await ctx.backend.kube.applyBundle(
      {
        bundle: item.name,
        revision: item.revision,
        manifests,
        ...(namespace === "" ? {} : { namespace }),
        // A redeploy restores what others changed: it takes their fields back.
        ...(item.redeploy === true ? { force: true } : {}),
        ...compact({
          targetNamespace: content.targetNamespace,
          correctDrift: item.correctDrift,
          namespaceLabels: content.namespaceLabels,
          namespaceAnnotations: content.namespaceAnnotations,
        }),
      },
      { signal },
    );
  } catch (caught) {
    if (signal.aborted) return;
    const error = FlotillaError.from(caught);
    ctx.log.warn({ err: error, bundle: item.name }, "Apply failed");
    failed(
      error.message.startsWith("Cannot")
        ? error.message
        : `${what}: ${error.message}`,
    );
    finished("Failed");
    return;
  }
  if (signal.aborted) return;
  // The watch may have seen more by now (NotReady, Ready): report the gateway's latest, never older.
  const latest = ctx.backend.kube.status(item.name);
  ctx.setStatus(
    item,
    bundleItemStatus(latest?.revision === item.revision ? latest : result),
  );
  finished(result.phase === "Failed" ? "Failed" : "Applied");
}
