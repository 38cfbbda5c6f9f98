/**
 * Which clusters have a live agent session with which hub replica, told over core NATS on
 * `<prefix>.hub.presence` (docs/high-availability.md). Each replica sends its list on every pass
 * and soon after a session opens; the others count those clusters as heard from. A lost message
 * costs nothing: the next one says it all again, and a cluster is Unreachable only after the
 * heartbeat timeout without any.
 */
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { z } from "zod";

export interface Presence {
  start(onRemote: (replica: string, clusters: readonly string[]) => void): void;
  publish(clusters: readonly string[]): void;
  stop(): void;
}

const message = z.object({
  replica: z.string().min(1),
  clusters: z.array(z.string()),
});

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

export function createPresence(deps: {
  readonly nc: NatsConnection;
  readonly prefix?: string;
  readonly replica: string;
  readonly logger: Logger;
}): Presence {
  const subject = `${deps.prefix ?? "flotilla"}.hub.presence`;
  let subscription: Subscription | undefined;
  return {
    start(onRemote) {
      subscription = deps.nc.subscribe(subject, {
        callback: (error, msg) => {
          if (error !== null) return;
          let parsed: z.infer<typeof message> | undefined;
          try {
            const result = message.safeParse(
              JSON.parse(fromUtf8.decode(msg.data)),
            );
            parsed = result.success ? result.data : undefined;
          } catch {
            parsed = undefined;
          }
          if (parsed === undefined) {
            deps.logger.warn("malformed presence message dropped");
            return;
          }
          if (parsed.replica !== deps.replica) {
            onRemote(parsed.replica, parsed.clusters);
          }
        },
      });
    },
    publish(clusters) {
      if (deps.nc.isClosed()) return;
      deps.nc.publish(
        subject,
        utf8.encode(JSON.stringify({ replica: deps.replica, clusters })),
      );
    },
    stop() {
      subscription?.unsubscribe();
      subscription = undefined;
    },
  };
}
