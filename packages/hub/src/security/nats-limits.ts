/** Account limits shared by the accounts the NATS setup writes. */
import type { OperatorLimits } from "@nats-io/jwt";

/** No connection, subscription or payload limits (JetStream limits are separate). */
export function unlimitedConnections(): OperatorLimits {
  return {
    subs: -1,
    data: -1,
    payload: -1,
    imports: -1,
    exports: -1,
    wildcards: true,
    conn: -1,
    leaf: -1,
  };
}
