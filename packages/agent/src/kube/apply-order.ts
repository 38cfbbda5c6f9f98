/**
 * The order in which a bundle's objects reach the cluster: CustomResourceDefinitions first (their
 * kinds must be served before objects of those kinds can be applied), then Namespaces (namespaced
 * objects need them), then everything else in bundle order. Pruning and removal run in the reverse
 * order, so objects go before the namespaces and definitions that hold them.
 */

/** The kinds that go first, in this order. */
const FIRST_KINDS = ["CustomResourceDefinition", "Namespace"] as const;

function rank(kind: string): number {
  const i = (FIRST_KINDS as readonly string[]).indexOf(kind);
  return i === -1 ? FIRST_KINDS.length : i;
}

/** `items` in apply order (stable within a rank). */
export function applyOrder<T extends { readonly kind: string }>(
  items: readonly T[],
): T[] {
  return items
    .map((item, i) => ({ item, i }))
    .sort((a, b) => rank(a.item.kind) - rank(b.item.kind) || a.i - b.i)
    .map(({ item }) => item);
}

/** `items` in delete order: the reverse of {@link applyOrder}. */
export function deleteOrder<T extends { readonly kind: string }>(
  items: readonly T[],
): T[] {
  return applyOrder(items).reverse();
}
