/**
 * Which replica should own a unit: rendezvous (highest random weight) hashing. Every replica
 * computes the same answer from the same list of replicas, and when one leaves only its units
 * move, each to the replica that scores next highest for it, so work stays spread.
 */
import { createHash } from "node:crypto";

/** The score of `replica` for `unit`: the first 48 bits of SHA-256 over both. */
export function rendezvousScore(unit: string, replica: string): number {
  const digest = createHash("sha256").update(unit).update("\0").update(replica);
  return digest.digest().readUIntBE(0, 6);
}

/** The replica that scores highest for `unit` (ties: the smaller id), or undefined if none. */
export function preferredReplica(
  unit: string,
  replicas: Iterable<string>,
): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const replica of replicas) {
    const score = rendezvousScore(unit, replica);
    if (
      score > bestScore ||
      (score === bestScore && best !== undefined && replica < best)
    ) {
      best = replica;
      bestScore = score;
    }
  }
  return best;
}
