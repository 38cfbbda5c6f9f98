/**
 * The agent's address settings: one `HOST:PORT` (`--metrics-listen`), and the hub's address list
 * (`--hub`: one `HOST:PORT`, or several separated by commas for a hub run as several replicas).
 * zod schemas for config.ts, whose messages name the flag or variable and the whole value.
 */
import { z } from "zod";

/** A `HOST:PORT` address. */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)$/;

/** `HOST:PORT` (an IPv6 host in brackets) as host and port, or undefined when it is not one. */
function splitHostPort(
  raw: string,
  allowZero: boolean,
): ListenAddress | undefined {
  const at = raw.lastIndexOf(":");
  const host = at < 0 ? "" : raw.slice(0, at);
  const portText = at < 0 ? "" : raw.slice(at + 1);
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  const low = allowZero ? 0 : 1;
  if (!HOST.test(host) || !(port >= low && port <= 65_535)) return undefined;
  return { host: host.replace(/^\[(.*)\]$/, "$1"), port };
}

function portRange(allowZero: boolean): string {
  return `a port from ${allowZero ? "0" : "1"} to 65535`;
}

/** `HOST:PORT`; port 0 (pick a free one) only with `allowZero`. */
export function hostPort(
  allowZero: boolean,
): z.ZodPipe<z.ZodString, z.ZodTransform<ListenAddress, string>> {
  return z.string().transform((raw, ctx): ListenAddress => {
    const address = splitHostPort(raw, allowZero);
    if (address === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `must be HOST:PORT with ${portRange(allowZero)}`,
      });
      return z.NEVER;
    }
    return address;
  });
}

/** An address as gRPC takes it: an IPv6 host back in brackets. */
function showAddress({ host, port }: ListenAddress): string {
  return `${host.includes(":") ? `[${host}]` : host}:${String(port)}`;
}

/**
 * `HOST:PORT[,HOST:PORT...]`: the hub's addresses, each as gRPC takes it, in the order given. One
 * address has the message it always had; in a list, the message names the address at fault. An
 * empty entry or an address given twice is refused too: both are typing mistakes.
 */
export const hubAddresses = z
  .string()
  .transform((raw, ctx): readonly string[] => {
    const entries = raw.split(",").map((s) => s.trim());
    if (entries.length === 1) {
      const address = splitHostPort(raw.trim(), false);
      if (address !== undefined) return [showAddress(address)];
      ctx.addIssue({
        code: "custom",
        message: `must be HOST:PORT with ${portRange(false)}`,
      });
      return z.NEVER;
    }
    const addresses: string[] = [];
    let valid = true;
    for (const [i, entry] of entries.entries()) {
      const address = splitHostPort(entry, false);
      const problem =
        entry === ""
          ? `address ${String(i + 1)} is empty`
          : address === undefined
            ? `${JSON.stringify(entry)} is not HOST:PORT with ${portRange(false)}`
            : addresses.includes(showAddress(address))
              ? `${JSON.stringify(entry)} is given twice`
              : undefined;
      if (problem !== undefined) {
        valid = false;
        ctx.addIssue({
          code: "custom",
          message: `${problem} (one HOST:PORT, or several separated by commas)`,
        });
      } else if (address !== undefined) addresses.push(showAddress(address));
    }
    if (!valid) return z.NEVER;
    return addresses;
  });
