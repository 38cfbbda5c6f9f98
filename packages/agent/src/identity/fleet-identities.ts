/**
 * The identities of every cluster a process hosts (one, or a simulated fleet): one store per
 * cluster (a file store under the identity directory, `DIR/<cluster>/`, or the store the caller's
 * factory makes, e.g. a Secret), one keeper each, all registering with
 * the same bootstrap token (whose max uses must cover the fleet), a few at a time. Also reads the
 * token from where the configuration says it is, and builds each cluster's NATS connect options
 * from its identity (intents/nats-credentials.ts), reading the current credentials at every
 * connect so a renewal takes effect on the next reconnect.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ConnectionOptions } from "@nats-io/transport-node";
import { FlotillaError, showValue, compact } from "@flotilla/core";
import { intentKey, intentsBucket } from "@flotilla/protocol";
import type { Logger } from "pino";
import type { BootstrapTokenSource } from "../config/config-identity.js";
import { natsConnectOptions } from "../intents/nats-credentials.js";
import type { Clock } from "@flotilla/node";
import {
  createIdentityKeeper,
  type IdentityKeeper,
  type IdentityKeeperOptions,
} from "./identity-keeper.js";
import {
  createFileIdentityStore,
  type IdentityStore,
} from "./identity-store.js";

/** Reads the bootstrap token; `invalid_argument` naming the file when it is unreadable or empty. */
export async function readBootstrapToken(
  source: BootstrapTokenSource,
): Promise<string> {
  if (source.type === "env") return source.value;
  let text: string;
  try {
    text = await readFile(source.file, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new FlotillaError(
      "invalid_argument",
      `Cannot read the bootstrap token file ${showValue(source.file)}: ${code === "ENOENT" ? "no such file" : error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const token = text.trim();
  if (token === "")
    throw new FlotillaError(
      "invalid_argument",
      `Cannot read the bootstrap token file ${showValue(source.file)}: it is empty`,
    );
  return token;
}

/** Where {@link startIdentityKeepers} keeps each cluster's identity. */
export type IdentityStoreChoice =
  /** One file store per cluster: directory `dir/<cluster>`. */
  | { readonly dir: string }
  /** Any store, e.g. a Secret (secret-identity-store.ts). */
  | { readonly storeFor: (clusterName: string) => IdentityStore };

/** Options of {@link startIdentityKeepers}. */
export type StartIdentityKeepersOptions = Omit<
  IdentityKeeperOptions,
  "clusterName"
> &
  IdentityStoreChoice & {
    readonly clusterNames: readonly string[];
    /** How many clusters register at the same time; default 8. */
    readonly concurrency?: number;
    readonly signal?: AbortSignal;
  };

/** The store factory of `choice`. */
function storeFactory(
  choice: IdentityStoreChoice,
): (clusterName: string) => IdentityStore {
  if ("storeFor" in choice) return choice.storeFor;
  const { dir } = choice;
  return (name) => createFileIdentityStore(join(dir, name));
}

/**
 * Starts one keeper per cluster (loading or registering each identity) and resolves with them by
 * cluster name. If any cannot start, the others are stopped and the first error is thrown.
 */
export async function startIdentityKeepers(
  deps: { readonly clock: Clock; readonly logger: Logger },
  options: StartIdentityKeepersOptions,
): Promise<Map<string, IdentityKeeper>> {
  const storeFor = storeFactory(options);
  const { clusterNames, concurrency = 8, signal, ...rest } = options;
  const keeperOptions: Omit<IdentityKeeperOptions, "clusterName"> & {
    dir?: string;
    storeFor?: unknown;
  } = { ...rest };
  delete keeperOptions.dir;
  delete keeperOptions.storeFor;
  const keepers = new Map<string, IdentityKeeper>();
  const queue = [...clusterNames];
  let failure: unknown;
  const worker = async (): Promise<void> => {
    for (
      let name = queue.shift();
      name !== undefined && failure === undefined;
      name = queue.shift()
    ) {
      const keeper = createIdentityKeeper(
        {
          store: storeFor(name),
          clock: deps.clock,
          logger: deps.logger.child({ cluster: name }),
        },
        { ...keeperOptions, clusterName: name },
      );
      keepers.set(name, keeper);
      try {
        await keeper.start(compact({ signal }));
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(
    Array.from({ length: Math.max(1, concurrency) }, () => worker()),
  );
  if (failure !== undefined) {
    await Promise.allSettled([...keepers.values()].map((k) => k.stop()));
    throw FlotillaError.from(failure);
  }
  return keepers;
}

/**
 * NATS connect options of a cluster with an identity that carries NATS credentials, or undefined
 * when it carries none (a NATS server without authorization: the shared connection serves it).
 * Throws `failed_precondition` when the hub's bucket or key is not the one the agent would read.
 */
export function identityNatsOptions(
  keeper: IdentityKeeper,
  fallback: { readonly servers: readonly string[]; readonly prefix: string },
): Partial<ConnectionOptions> | undefined {
  const nats = keeper.current().nats;
  if (nats === undefined || nats.creds === "") return undefined;
  const cluster = keeper.clusterName;
  const expected = {
    bucket: intentsBucket(fallback.prefix),
    key: intentKey(cluster),
  };
  if (nats.bucket !== expected.bucket || nats.key !== expected.key)
    throw new FlotillaError(
      "failed_precondition",
      `Cannot read the intent of cluster ${showValue(cluster)}: the hub's NATS credentials are for bucket ${showValue(nats.bucket)} key ${showValue(nats.key)}, the agent reads bucket ${showValue(expected.bucket)} key ${showValue(expected.key)}; set --intents-prefix as the hub's`,
    );
  return {
    servers: [...(nats.servers.length > 0 ? nats.servers : fallback.servers)],
    ...natsConnectOptions({
      cluster,
      creds: () => keeper.current().nats?.creds ?? "",
    }),
  };
}
