/**
 * Putting a planned revision into the cluster:
 * 1. a server-side dry run of every object whose kind and namespace exist already, so RBAC
 *    refusals, field-ownership conflicts and invalid objects refuse the revision before anything
 *    changes;
 *    Then the namespace the bundle deploys into gets its fleet.yaml labels and annotations
 *    (namespace-metadata.ts), which creates it when missing (objects in a namespace about to be
 *    created are not dry-run, as for the bundle's own Namespaces);
 * 2. when the revision adds objects, the inventory is widened first (previous objects plus new
 *    ones, previous revision), so an apply that stops half-way leaves nothing untracked;
 * 3. server-side apply in order (CRDs, waiting until each is Established, then Namespaces, then the
 *    rest);
 * 4. prune: objects of the previous inventory that the revision dropped are deleted, in reverse
 *    order, unless their `flotilla.dev/bundle` label says another bundle took them over;
 * 5. the inventory is written with the new revision and objects (plus any that failed to prune).
 * A refusal throws {@link ApplyRefused} naming the object and the server's reason.
 */
import type { Logger } from "pino";
import type { Clock } from "@flotilla/node";
import { deleteOrder } from "./apply-order.js";
import type { AppliedObject } from "./bundle-tracker.js";
import type { PlannedObject } from "./bundle-plan.js";
import { BUNDLE_LABEL, writeInventory, type Inventory } from "./inventory.js";
import {
  KubeCallError,
  type KubeClient,
  type KubeObject,
} from "./kube-client.js";
import { resourceKey, type ResourceRef } from "./manifest.js";
import { readinessOf } from "./readiness.js";
import {
  applyNamespaceMetadata,
  type NamespaceMetadataRequest,
} from "./namespace-metadata.js";

/** A revision the cluster refused; `message` names the object and the reason. */
export class ApplyRefused extends Error {
  override readonly name = "ApplyRefused";
}

/** What {@link applyPlanned} needs. */
export interface ApplyPlannedOptions {
  readonly client: KubeClient;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The agent's namespace, where inventories live. */
  readonly namespace: string;
  readonly bundle: string;
  readonly revision: string;
  readonly previous: Inventory | undefined;
  readonly force: boolean;
  readonly crdTimeoutMs: number;
  readonly pollIntervalMs: number;
  readonly signal: AbortSignal;
  /** The namespace metadata to apply on its own (not merged into a planned Namespace). */
  readonly namespaceMetadata?: {
    readonly ns: NamespaceMetadataRequest;
    readonly manager: string;
  };
}

/** `Deployment shop/web`, `Namespace shop`. */
export function describeRef(ref: ResourceRef): string {
  return `${ref.kind} ${ref.namespace === "" ? "" : `${ref.namespace}/`}${ref.name}`;
}

function reason(error: unknown): string {
  if (error instanceof KubeCallError)
    return error.status === 0
      ? error.message
      : `${error.reason} (${String(error.status)}): ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

async function step<T>(
  ref: ResourceRef,
  action: string,
  run: () => Promise<T>,
  signal: AbortSignal,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    signal.throwIfAborted();
    throw new ApplyRefused(`${action} ${describeRef(ref)}: ${reason(error)}`, {
      cause: error,
    });
  }
}

async function awaitEstablished(
  o: ApplyPlannedOptions,
  ref: ResourceRef,
): Promise<KubeObject> {
  const deadline = o.clock.now() + o.crdTimeoutMs;
  for (;;) {
    const live = await step(
      ref,
      "Cannot read",
      () => o.client.get(ref, { signal: o.signal }),
      o.signal,
    );
    if (live !== undefined && readinessOf(live).state === "Ready") return live;
    if (o.clock.now() >= deadline)
      throw new ApplyRefused(
        `${describeRef(ref)} was not Established within ${String(o.crdTimeoutMs)} ms`,
      );
    await o.clock.sleep(o.pollIntervalMs, { signal: o.signal });
  }
}

/**
 * Deletes an inventory object unless it is gone or its `flotilla.dev/bundle` label says another
 * bundle took it over (then it is left alone and logged).
 */
export async function deleteOwned(
  o: {
    client: KubeClient;
    logger: Logger;
    bundle: string;
    signal: AbortSignal;
  },
  ref: ResourceRef,
): Promise<void> {
  const live = await o.client.get(ref, { signal: o.signal });
  if (live === undefined) return;
  const labels =
    (live.metadata as { labels?: Record<string, string> } | undefined)
      ?.labels ?? {};
  if (labels[BUNDLE_LABEL] !== o.bundle) {
    o.logger.info(
      {
        bundle: o.bundle,
        object: describeRef(ref),
        owner: labels[BUNDLE_LABEL],
      },
      "Not deleting an object another bundle took over",
    );
    return;
  }
  await o.client.remove(ref, { signal: o.signal });
}

/** Applies `planned` (in order) as described in the module comment; returns what was applied. */
export async function applyPlanned(
  o: ApplyPlannedOptions,
  planned: readonly PlannedObject[],
): Promise<AppliedObject[]> {
  const { client, signal } = o;
  const created = new Set(
    planned.filter((p) => p.ref.kind === "Namespace").map((p) => p.ref.name),
  );
  const meta = o.namespaceMetadata;
  const nsRef: ResourceRef = {
    apiVersion: "v1",
    kind: "Namespace",
    namespace: "",
    name: meta?.ns.name ?? "",
  };
  if (
    meta !== undefined &&
    (Object.keys(meta.ns.labels).length > 0 ||
      Object.keys(meta.ns.annotations).length > 0) &&
    (await step(
      nsRef,
      "Cannot read",
      () => client.get(nsRef, { signal }),
      signal,
    )) === undefined
  )
    created.add(meta.ns.name);
  for (const p of planned) {
    if (p.definedByBundle || created.has(p.ref.namespace)) continue;
    await step(
      p.ref,
      "Cannot apply",
      () => client.apply(p.object, { force: o.force, dryRun: true, signal }),
      signal,
    );
  }
  if (meta !== undefined)
    await step(
      nsRef,
      "Cannot set the labels and annotations of",
      () =>
        applyNamespaceMetadata(client, meta.ns, {
          manager: meta.manager,
          signal,
        }),
      signal,
    );

  const previousRefs = o.previous?.refs ?? [];
  const kept = new Set(previousRefs.map(resourceKey));
  const added = planned
    .map((p) => p.ref)
    .filter((r) => !kept.has(resourceKey(r)));
  if (added.length > 0)
    await writeInventory(
      client,
      o.namespace,
      {
        bundle: o.bundle,
        revision: o.previous?.revision ?? "",
        refs: [...previousRefs, ...added],
      },
      signal,
    );

  const applied: AppliedObject[] = [];
  for (const p of planned) {
    const live = await step(
      p.ref,
      "Cannot apply",
      () => client.apply(p.object, { force: o.force, signal }),
      signal,
    );
    applied.push({
      ref: p.ref,
      applied: p.object,
      live:
        p.ref.kind === "CustomResourceDefinition"
          ? await awaitEstablished(o, p.ref)
          : live,
    });
  }

  const wanted = new Set(planned.map((p) => resourceKey(p.ref)));
  const leftovers: ResourceRef[] = [];
  for (const ref of deleteOrder(
    previousRefs.filter((r) => !wanted.has(resourceKey(r))),
  )) {
    try {
      await deleteOwned(
        { client, logger: o.logger, bundle: o.bundle, signal },
        ref,
      );
    } catch (error) {
      signal.throwIfAborted();
      o.logger.warn(
        { err: error, bundle: o.bundle, object: describeRef(ref) },
        "Cannot prune object; keeping it in the inventory",
      );
      leftovers.push(ref);
    }
  }
  await writeInventory(
    client,
    o.namespace,
    {
      bundle: o.bundle,
      revision: o.revision,
      refs: [...planned.map((p) => p.ref), ...leftovers],
    },
    signal,
  );
  return applied;
}
