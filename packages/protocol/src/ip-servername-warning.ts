/**
 * grpc-js passes the target's host to TLS as the server name even when it is an IP address
 * (`127.0.0.1:7070`), and Node then prints DEP0123 ("Setting the TLS ServerName to an IP address
 * is not permitted by RFC 6066") once per process. The warning is noise for a CLI user or an
 * agent's log: the server name only selects a certificate, and the certificate is still verified
 * against the IP address (its IP SAN). Processes that dial the hub call this once at start; every
 * other warning is printed as before.
 */
const DEP0123 = "DEP0123";

let installed = false;

/** Drops Node's DEP0123 warning for this process; idempotent. */
export function silenceIpServernameWarning(): void {
  if (installed) return;
  installed = true;
  const emit = process.emitWarning.bind(process) as (
    warning: string | Error,
    ...rest: unknown[]
  ) => void;
  process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
    const [first, second] = rest;
    const code =
      typeof first === "object" && first !== null
        ? (first as { code?: unknown }).code
        : second;
    if (code === DEP0123) return;
    emit(warning, ...rest);
  };
}
