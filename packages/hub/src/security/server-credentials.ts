/**
 * The hub's gRPC server credentials under TLS. The server asks every client for a
 * certificate chaining to the hub's CA but does not require one: Register (no certificate yet) and
 * bearer-token admin calls share the port with mTLS agents and admins, and every handler that
 * relies on a certificate checks it itself (certificate-verifier.ts). The serving certificate and
 * the CA are held in memory and can be replaced while the server runs (rotation).
 */
import { experimental, type ServerCredentials } from "@grpc/grpc-js";

type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

/** The serving certificate (with its chain) and key, and the CA that client certificates chain to. */
export interface ServerTlsMaterial {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
  readonly caCertificatePem: string;
}

/** A certificate provider holding the material in memory; listeners hear every replacement. */
class MemoryCertificateProvider implements experimental.CertificateProvider {
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();

  constructor(private material: ServerTlsMaterial) {}

  replace(material: ServerTlsMaterial): void {
    this.material = material;
    for (const listener of this.caListeners) listener(this.caUpdate());
    for (const listener of this.identityListeners) {
      listener(this.identityUpdate());
    }
  }

  private caUpdate(): experimental.CaCertificateUpdate {
    return { caCertificate: Buffer.from(this.material.caCertificatePem) };
  }

  private identityUpdate(): experimental.IdentityCertificateUpdate {
    return {
      certificate: Buffer.from(this.material.certificatePem),
      privateKey: Buffer.from(this.material.privateKeyPem),
    };
  }

  // grpc-js subscribes to the provider before it registers the server's watcher, so an answer
  // given synchronously would reach no one: the first answer comes a microtask later.
  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    queueMicrotask(() => {
      if (this.caListeners.has(listener)) listener(this.caUpdate());
    });
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    queueMicrotask(() => {
      if (this.identityListeners.has(listener)) {
        listener(this.identityUpdate());
      }
    });
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }
}

/** Server credentials and a way to swap the certificates without a restart. */
export interface HubServerCredentials {
  readonly credentials: ServerCredentials;
  /** New connections use `material` from now on; open ones keep theirs. */
  replace(material: ServerTlsMaterial): void;
}

/** TLS server credentials that request (but do not require) a client certificate. */
export function createHubServerCredentials(
  material: ServerTlsMaterial,
): HubServerCredentials {
  const provider = new MemoryCertificateProvider(material);
  return {
    credentials: experimental.createCertificateProviderServerCredentials(
      provider,
      provider,
      false,
    ),
    replace(next) {
      provider.replace(next);
    },
  };
}
