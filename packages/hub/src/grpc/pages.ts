/**
 * Paging of admin lists: items sorted by name; the page token is the last name of the previous
 * page (base64url), so a page is stable while objects are added or removed elsewhere.
 */
import { FlotillaError } from "@flotilla/core";

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

export interface Page<T> {
  readonly items: T[];
  readonly nextPageToken: string;
}

/** Checks paging fields; problems name `pageSize` / `pageToken`. Returns the size and the after-key. */
export function pageRequest(
  pageSize: number | undefined,
  pageToken: string | undefined,
): { size: number; after?: string } {
  const size =
    pageSize === undefined || pageSize === 0 ? DEFAULT_PAGE_SIZE : pageSize;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw FlotillaError.invalid("page request", [
      {
        path: "pageSize",
        message: `must be 1 to ${String(MAX_PAGE_SIZE)}`,
        value: pageSize,
      },
    ]);
  }
  if (pageToken === undefined || pageToken === "") return { size };
  const after = Buffer.from(pageToken, "base64url").toString("utf8");
  if (
    after === "" ||
    Buffer.from(after, "utf8").toString("base64url") !== pageToken
  ) {
    throw FlotillaError.invalid("page request", [
      {
        path: "pageToken",
        message: "is not a token this hub issued",
        value: pageToken,
      },
    ]);
  }
  return { size, after };
}

/** One page of `items` (sorted by `keyOf`). */
export function paginate<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  pageSize: number | undefined,
  pageToken: string | undefined,
): Page<T> {
  const { size, after } = pageRequest(pageSize, pageToken);
  const start =
    after === undefined ? 0 : items.findIndex((i) => keyOf(i) > after);
  const from = start === -1 ? items.length : start;
  const page = items.slice(from, from + size);
  const last = page.at(-1);
  const more = from + size < items.length && last !== undefined;
  return {
    items: page,
    nextPageToken: more
      ? Buffer.from(keyOf(last), "utf8").toString("base64url")
      : "",
  };
}
