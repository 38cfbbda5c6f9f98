/**
 * The order in which one agent tries the hub's addresses when the hub runs as several replicas
 * (docs/agent.md, "Several hub replicas"). Each agent draws its own random order of the list once,
 * starts at its first address and moves to the next after every failed or ended connection,
 * round and round. Two things follow: agents given the same list spread over the replicas from
 * the start, and the agents of a replica that dies spread over the others in turn instead of all
 * moving to the same next one. When they move is the caller's backoff, jittered per agent.
 *
 * One address is always itself, and draws nothing from the random source.
 */

/** The hub's AgentService address `HOST:PORT`, or the addresses of its replicas. */
export type HubAddresses = string | readonly string[];

/** The addresses of `hub` as a list (one address is a list of one). */
export function hubAddressList(hub: HubAddresses): readonly string[] {
  return typeof hub === "string" ? [hub] : hub;
}

/** One agent's way round the hub's addresses. */
export interface HubRotation {
  /** The address to connect to now. */
  readonly current: string;
  /** Every address, in this agent's order (starting with the first one it tried). */
  readonly order: readonly string[];
  /** Moves to the next address; true when that is another address than before. */
  advance(): boolean;
}

/**
 * A rotation over `hub` in an order drawn with `random` (uniform in [0, 1)). Throws on an empty
 * list: configuration parsing refuses one before it gets here.
 */
export function createHubRotation(
  hub: HubAddresses,
  random: () => number,
): HubRotation {
  const order = shuffled(hubAddressList(hub), random);
  const first = order[0];
  if (first === undefined)
    throw new RangeError("A hub rotation needs at least one address");
  let index = 0;
  let current = first;
  return {
    get current() {
      return current;
    },
    order,
    advance() {
      index = (index + 1) % order.length;
      const before = current;
      current = order[index] ?? first;
      return current !== before;
    },
  };
}

/** A Fisher-Yates shuffle of `items`; a list of one or none is returned as it is. */
function shuffled<T>(items: readonly T[], random: () => number): readonly T[] {
  if (items.length < 2) return items;
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const a = out[i] as T;
    out[i] = out[j] as T;
    out[j] = a;
  }
  return out;
}
