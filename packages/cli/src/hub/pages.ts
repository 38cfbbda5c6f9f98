/**
 * Lists page with an opaque token (admin.proto); commands show whole lists, so they follow the
 * tokens to the end. A token seen twice ends the walk rather than looping on a confused server.
 */

/** One page: its items and the token of the next page ("" when it is the last). */
export interface Page<T> {
  readonly items: readonly T[];
  readonly nextPageToken: string;
}

/** Every item of every page, fetching `fetch(token)` from the first page ("") on. */
export async function listAll<T>(
  fetch: (pageToken: string) => Promise<Page<T>>,
): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let token = "";
  for (;;) {
    const page = await fetch(token);
    items.push(...page.items);
    token = page.nextPageToken;
    if (token === "" || seen.has(token)) return items;
    seen.add(token);
  }
}
