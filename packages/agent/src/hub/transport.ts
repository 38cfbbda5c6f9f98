/**
 * How the agent reaches the hub: TLS (the hub verified with a CA; with a client certificate and
 * key, mutual TLS, which a hub with TLS requires) or plaintext, which must be asked for by
 * name (`insecurePlaintext: true`): there is no silent fallback from one to the other.
 */
import { readFile } from "node:fs/promises";
import { FlotillaError, compact } from "@flotilla/core";
import { credentials, type ChannelCredentials } from "@grpc/grpc-js";

/** PEM material for TLS; `cert` and `key` go together. */
export interface HubTls {
  readonly ca: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
}

/**
 * The transport to the hub. `tls` may be a function: it is called for every new channel, so a
 * session picks up a renewed client certificate (identity/identity-keeper.ts) when it reconnects.
 */
export type HubTransport =
  | { readonly insecurePlaintext: true }
  | { readonly tls: HubTls | (() => HubTls) };

/** Channel credentials for a transport (the current material when `tls` is a function). */
export function hubCredentials(transport: HubTransport): ChannelCredentials {
  if ("insecurePlaintext" in transport) return credentials.createInsecure();
  const { ca, cert, key } =
    typeof transport.tls === "function" ? transport.tls() : transport.tls;
  if ((cert === undefined) !== (key === undefined))
    throw new FlotillaError(
      "invalid_argument",
      "Cannot set up TLS to the hub: a client certificate and its key go together",
    );
  return credentials.createSsl(ca, key ?? null, cert ?? null);
}

/** Files of {@link readHubTls}. */
export interface HubTlsFiles {
  readonly caFile: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

/** Reads the PEM files; `invalid_argument` naming the file that cannot be read. */
export async function readHubTls(files: HubTlsFiles): Promise<HubTls> {
  const read = async (file: string, what: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new FlotillaError(
        "invalid_argument",
        `Cannot read the ${what} "${file}": ${code === "ENOENT" ? "no such file" : error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  };
  const ca = await read(files.caFile, "hub CA certificate");
  const cert =
    files.certFile === undefined
      ? undefined
      : await read(files.certFile, "client certificate");
  const key =
    files.keyFile === undefined
      ? undefined
      : await read(files.keyFile, "client key");
  return {
    ca,
    ...compact({ cert, key }),
  };
}
