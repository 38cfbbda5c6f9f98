/**
 * Optional fields without the `...compact({ x })` dance: `compact({ a, b })` keeps
 * only the keys whose value is defined, so an absent input stays an absent key (not a key holding
 * `undefined`) in the objects that are serialised, compared or logged.
 */

/** The keys of T whose type admits `undefined`. */
type MaybeKeys<T> = {
  [K in keyof T]-?: undefined extends T[K] ? K : never;
}[keyof T];

/** T with every key that may be undefined made optional and its value type stripped of undefined. */
export type Compact<T> = { [K in Exclude<keyof T, MaybeKeys<T>>]: T[K] } & {
  [K in MaybeKeys<T>]?: Exclude<T[K], undefined>;
};

/** A copy of `fields` without the keys whose value is undefined; key order is kept. */
export function compact<T extends object>(fields: T): Compact<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) out[key] = value;
  }
  return out as Compact<T>;
}
