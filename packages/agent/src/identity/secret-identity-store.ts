/**
 * The Secret adapter of the IdentityStore port (for agents in a real cluster):
 * one cluster's identity in one Kubernetes Secret of type Opaque whose keys are the file store's
 * file names (key.pem, cert.pem, ca.pem, nats.creds, identity.json), parsed and validated by the
 * same function as the file store (identity-store.ts).
 *
 * A save is one server-side apply of the whole Secret (field manager `flotilla-agent`, force), so a
 * reader sees the old identity or the new one, never a mix. The agent's service account needs get,
 * create, patch and update on that one Secret (the Helm chart's Role grants exactly that).
 *
 * Tested against the local API server of @flotilla/testkit (there is no real API server on the
 * development machines).
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { FlotillaError, showValue, compact } from "@flotilla/core";
import { createKubeClient, KubeCallError } from "../kube/kube-client.js";
import {
  IDENTITY_FILES,
  parseStoredIdentity,
  storedIdentityFiles,
  type IdentityFileName,
  type IdentityStore,
} from "./identity-store.js";

/** The field manager of the agent's writes to its identity Secret. */
export const IDENTITY_FIELD_MANAGER = "flotilla-agent";

/** The Secret that {@link createSecretIdentityStore} keeps the identity in. */
export interface IdentitySecretRef {
  readonly namespace: string;
  readonly name: string;
}

/** Creates the store of one cluster's identity in Secret `namespace/name`. */
export function createSecretIdentityStore(
  deps: { readonly kubeConfig: KubeConfig },
  secret: IdentitySecretRef,
): IdentityStore {
  const client = createKubeClient(deps.kubeConfig, IDENTITY_FIELD_MANAGER);
  const location = `Secret ${secret.namespace}/${secret.name}`;
  const ref = {
    apiVersion: "v1",
    kind: "Secret",
    namespace: secret.namespace,
    name: secret.name,
  };

  const corrupt = (problem: string, cause?: unknown): FlotillaError =>
    new FlotillaError(
      "failed_precondition",
      `Cannot load the identity stored in ${location}: ${problem}; delete the Secret and register again with a new bootstrap token`,
      compact({ cause }),
    );

  /** A refused or failed call, as an error naming the Secret and the verb. */
  const callFailed = (verb: string, error: unknown): FlotillaError => {
    if (!(error instanceof KubeCallError)) return FlotillaError.from(error);
    if (error.status === 403)
      return new FlotillaError(
        "permission_denied",
        `Cannot ${verb} ${location}: forbidden (${error.message}); the agent's service account needs get, create, patch and update on Secret ${showValue(secret.name)} in namespace ${showValue(secret.namespace)} (the Helm chart's Role grants them)`,
        { cause: error },
      );
    return new FlotillaError(
      error.status === 0 ? "unavailable" : "internal",
      `Cannot ${verb} ${location}: ${error.message}`,
      { cause: error },
    );
  };

  return {
    location,

    async load() {
      let object: Record<string, unknown> | undefined;
      try {
        object = await client.get(ref);
      } catch (error) {
        throw callFailed("get", error);
      }
      if (object === undefined) return undefined;
      const data = object.data;
      const entries =
        typeof data === "object" && data !== null && !Array.isArray(data)
          ? (data as Record<string, unknown>)
          : {};
      const read = (name: IdentityFileName): string => {
        const value = entries[name];
        if (typeof value !== "string")
          throw corrupt(`key ${showValue(name)} is missing`);
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0)
          throw corrupt(`key ${showValue(name)} is not base64`);
        return Buffer.from(value, "base64").toString("utf8");
      };
      return parseStoredIdentity(read, corrupt);
    },

    async save(identity) {
      const files = storedIdentityFiles(identity);
      const data: Record<string, string> = {};
      for (const name of Object.values(IDENTITY_FILES))
        data[name] = Buffer.from(files[name], "utf8").toString("base64");
      try {
        await client.apply(
          {
            apiVersion: "v1",
            kind: "Secret",
            metadata: {
              name: secret.name,
              namespace: secret.namespace,
              labels: { "app.kubernetes.io/managed-by": "flotilla-agent" },
            },
            type: "Opaque",
            data,
          },
          { force: true },
        );
      } catch (error) {
        throw callFailed("patch (server-side apply)", error);
      }
    },
  };
}
