/**
 * The hub's TLS at start: the CA (the operator's files, else the state store's, created
 * on the first start), the serving certificate (the operator's files, else one the hub issues
 * itself from its CA and renews before it expires), the server credentials built from both, and
 * the CA certificate written where CLIs and agents can read it.
 */
import { readFile, writeFile } from "node:fs/promises";
import { createSecureContext } from "node:tls";
import { FlotillaError, showValue } from "@flotilla/core";
import type { ServerCredentials } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { StateStore } from "../store/state-store.js";
import { loadOrCreateCertificateAuthority } from "./ca-store.js";
import {
  createCertificateAuthority,
  type CertificateAuthority,
} from "./certificate-authority.js";
import { createHubServerCredentials } from "./server-credentials.js";

/** A serving certificate the hub issues itself lives this long... */
export const SERVING_CERT_TTL_MS = 30 * 24 * 3_600_000;

/** ...and is replaced this often, well before it expires. */
export const SERVING_CERT_RENEW_MS = 10 * 24 * 3_600_000;

/** Where the TLS material comes from (config.ts HubTlsConfig). */
export interface HubTlsSources {
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly caCertFile?: string;
  readonly caKeyFile?: string;
  readonly sans: readonly string[];
  readonly writeCaFile?: string;
}

/** The hub's CA and server credentials; `stop` ends serving-certificate renewal. */
export interface HubTls {
  readonly authority: CertificateAuthority;
  readonly credentials: ServerCredentials;
  stop(): void;
}

async function readPem(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    throw new FlotillaError(
      "failed_precondition",
      `Cannot read the ${what} ${showValue(file)}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
      { cause: error },
    );
  }
}

export async function prepareHubTls(
  sources: HubTlsSources,
  deps: { readonly store: StateStore; readonly logger: Logger },
): Promise<HubTls> {
  const log = deps.logger;
  const authority =
    sources.caCertFile !== undefined && sources.caKeyFile !== undefined
      ? await createCertificateAuthority({
          certificatePem: await readPem(sources.caCertFile, "CA certificate"),
          privateKeyPem: await readPem(sources.caKeyFile, "CA private key"),
        })
      : await loadOrCreateCertificateAuthority(deps.store);
  if (sources.writeCaFile !== undefined) {
    await writeFile(sources.writeCaFile, authority.certificatePem, {
      mode: 0o644,
    });
    log.info({ file: sources.writeCaFile }, "CA certificate written");
  }

  if (sources.certFile !== undefined && sources.keyFile !== undefined) {
    const certificatePem = await readPem(sources.certFile, "TLS certificate");
    const privateKeyPem = await readPem(sources.keyFile, "TLS private key");
    // grpc-js only logs a certificate it cannot use and then fails every handshake: check first.
    try {
      createSecureContext({ cert: certificatePem, key: privateKeyPem });
    } catch (error) {
      throw new FlotillaError(
        "failed_precondition",
        `Cannot serve TLS with the certificate ${showValue(sources.certFile)} and the key ${showValue(sources.keyFile)}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    const served = createHubServerCredentials({
      certificatePem,
      privateKeyPem,
      caCertificatePem: authority.certificatePem,
    });
    return {
      authority,
      credentials: served.credentials,
      stop: () => undefined,
    };
  }

  const issue = async () => {
    const serving = await authority.issueServingCertificate(
      sources.sans,
      SERVING_CERT_TTL_MS,
    );
    log.info(
      { sans: sources.sans, expiresAtMs: serving.expiresAtMs },
      "serving certificate issued by the hub's CA",
    );
    return {
      certificatePem: serving.certificatePem,
      privateKeyPem: serving.privateKeyPem,
      caCertificatePem: authority.certificatePem,
    };
  };
  const served = createHubServerCredentials(await issue());
  const timer = setInterval(() => {
    issue().then(
      (material) => {
        served.replace(material);
      },
      (error: unknown) => {
        log.error({ err: error }, "cannot renew the serving certificate");
      },
    );
  }, SERVING_CERT_RENEW_MS);
  timer.unref();
  return {
    authority,
    credentials: served.credentials,
    stop: () => {
      clearInterval(timer);
    },
  };
}
