/**
 * A parsed YAML document as plain data, or the message that says why it cannot be. Unresolved or
 * too many aliases only surface when a document is converted, and so does nesting deep enough to
 * exhaust the stack there (reported as core's nesting limit).
 */
import { tooDeepProblem } from "@flotilla/core";

/** What converting a document gives: its value, or a message. */
export type DocumentValue =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly message: string };

export function documentValue(
  doc: { toJS(options: { maxAliasCount: number }): unknown },
  maxAliasCount: number,
): DocumentValue {
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount }) };
  } catch (error) {
    return {
      ok: false,
      message:
        error instanceof RangeError
          ? tooDeepProblem("").message
          : error instanceof Error
            ? error.message
            : String(error),
    };
  }
}
