/** The rule for the prefix an adapter puts in front of its JetStream bucket and stream names. */
import { FlotillaError } from "@flotilla/core";

// NATS allows only these characters in bucket and stream names.
const BUCKET_PREFIX_PATTERN = /^[-_A-Za-z0-9]{1,64}$/;

/** Why `prefix` cannot start bucket names (NATS allows `[-_A-Za-z0-9]` only), or undefined. */
export function bucketPrefixProblem(prefix: string): string | undefined {
  return BUCKET_PREFIX_PATTERN.test(prefix)
    ? undefined
    : "must be 1 to 64 characters of A-Z, a-z, 0-9, - and _";
}

/**
 * Throws `invalid_argument` ("`what`: `option` "`prefix`" must be …") when `prefix` cannot start
 * bucket names; `option` is the name the caller knows the prefix by.
 */
export function checkBucketPrefix(
  prefix: string,
  what: string,
  option: string,
): void {
  const problem = bucketPrefixProblem(prefix);
  if (problem !== undefined) {
    throw new FlotillaError(
      "invalid_argument",
      `${what}: ${option} "${prefix}" ${problem}`,
    );
  }
}
