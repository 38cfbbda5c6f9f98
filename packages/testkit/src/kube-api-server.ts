/**
 * A local Kubernetes API server for tests (node:http, plain HTTP on 127.0.0.1). No real API
 * server or Docker exists on the development machines, so the client-node gateway and the upgrade
 * drivers are tested against this one. It speaks the REST subset they use: discovery, GET and
 * LIST with label and field selectors, server-side apply (`application/apply-patch+yaml` with a
 * JSON body, `fieldManager`, `force`, 409 on conflicts), merge patches, create, replace, DELETE,
 * WATCH, and the `/status` subresource. Hooks let a test play the rest of the cluster: controllers
 * (`setStatus`, `establishCrd`), other users (`edit`, `put`, `remove`), RBAC (`forbid`) and
 * immutable fields (`immutable`).
 *
 * Not modelled: authentication, admission, finalizers and graceful deletion (deletes are
 * immediate), list-map merging of server-side apply (lists are atomic), pagination, protobuf.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeApiError } from "./kube-api-error.js";
import { isJsonObject, type JsonObject } from "./kube-api-fields.js";
import type { ResourceType } from "./kube-api-kinds.js";
import { createHandler, type KubeApiRequest } from "./kube-api-routes.js";
import { KubeStore } from "./kube-api-store.js";

export type { JsonObject } from "./kube-api-fields.js";
export type { KubeApiRequest } from "./kube-api-routes.js";

/** Options of {@link startKubeApiServer}. */
export interface KubeApiServerOptions {
  /**
   * When a CustomResourceDefinition becomes Established (and its kind servable): at once
   * (default), or only when the test calls `establishCrd`.
   */
  readonly crdEstablishment?: "immediate" | "manual";
  /** What `GET /version` answers as `gitVersion`; default "v1.31.2". */
  readonly gitVersion?: string;
}

/** A running server; see the module comment. */
export interface KubeApiServer extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** A kubeconfig (JSON, which every YAML loader reads) pointing at this server. */
  kubeconfig(options?: { namespace?: string }): string;
  /** Replaces an object's status, as its controller would; bumps resourceVersion, not generation. */
  setStatus(
    kind: string,
    namespace: string,
    name: string,
    status: unknown,
  ): void;
  /** Marks a CustomResourceDefinition Established, making its kind servable. */
  establishCrd(name: string): void;
  /** Answers 403 Forbidden to `verb` ("*" for all) on `resource` (plural, e.g. "deployments"; "*" for all). */
  forbid(verb: string, resource: string): void;
  /**
   * Makes `field` (a dotted path such as `spec.selector`) of existing objects of `kind`
   * immutable, as Kubernetes' validation does for some fields: a write that changes it is answered
   * 422 Invalid "field is immutable" (hooks such as `edit` and `put` included).
   */
  immutable(kind: string, field: string): void;
  /** Undoes {@link KubeApiServer.forbid}. */
  allow(verb: string, resource: string): void;
  /**
   * Changes an object as another user would (an update by `manager`, default "kubectl-edit",
   * which then owns the fields whose values changed): drift, or the cause of an apply conflict.
   */
  edit(
    kind: string,
    namespace: string,
    name: string,
    mutate: (object: JsonObject) => void,
    manager?: string,
  ): void;
  /** Creates or updates an object by server-side apply as `manager` (default "someone-else"). */
  put(object: JsonObject, manager?: string): void;
  /** Deletes an object as another user would. */
  remove(kind: string, namespace: string, name: string): void;
  /** Copies of the stored objects, optionally of one kind. */
  objects(kind?: string): JsonObject[];
  /** A copy of one object, or undefined. */
  object(kind: string, namespace: string, name: string): JsonObject | undefined;
  /** Every request received so far, oldest first. */
  requests(): readonly KubeApiRequest[];
  close(): Promise<void>;
}

/** Starts a server on a free port of 127.0.0.1. Close it with `close()` or `await using`. */
export async function startKubeApiServer(
  options: KubeApiServerOptions = {},
): Promise<KubeApiServer> {
  const store = new KubeStore(options.crdEstablishment !== "manual");
  const forbidden = new Set<string>();
  const log: KubeApiRequest[] = [];
  const watches = new Set<() => void>();

  const typeOfKind = (kind: string): ResourceType => {
    const type = store.types().find((x) => x.kind === kind);
    if (type === undefined)
      throw new KubeApiError(
        404,
        "NotFound",
        `kind ${JSON.stringify(kind)} is not served`,
      );
    return type;
  };

  const handle = createHandler({
    store,
    forbidden,
    log,
    watches,
    gitVersion: options.gitVersion ?? "v1.31.2",
  });

  const server = createServer(handle);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;

  const nsOf = (type: ResourceType, namespace: string): string =>
    type.namespaced ? namespace : "";
  const close = async (): Promise<void> => {
    for (const end of watches) end();
    server.closeAllConnections();
    if (server.listening)
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
  };
  return {
    url,
    kubeconfig: ({ namespace = "default" } = {}) =>
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        // client-node refuses plain http unless TLS verification is off; there is no TLS here.
        clusters: [
          {
            name: "local",
            cluster: { server: url, "insecure-skip-tls-verify": true },
          },
        ],
        users: [{ name: "tester", user: { token: "test-token" } }],
        contexts: [
          {
            name: "local",
            context: { cluster: "local", user: "tester", namespace },
          },
        ],
        "current-context": "local",
      }),
    setStatus: (kind, namespace, name, status) => {
      const type = typeOfKind(kind);
      store.writeStatus(type, nsOf(type, namespace), name, status);
    },
    establishCrd: (name) => {
      const type = typeOfKind("CustomResourceDefinition");
      const crd = store.get(type, "", name);
      const previous =
        isJsonObject(crd.status) && Array.isArray(crd.status.conditions)
          ? (crd.status.conditions as unknown[])
          : [];
      const conditions = [
        ...previous.filter((c) => !isJsonObject(c) || c.type !== "Established"),
        { type: "Established", status: "True", reason: "InitialNamesAccepted" },
      ];
      store.writeStatus(type, "", name, {
        ...(isJsonObject(crd.status) ? crd.status : {}),
        conditions,
      });
    },
    forbid: (verb, resource) => forbidden.add(`${verb} ${resource}`),
    allow: (verb, resource) => forbidden.delete(`${verb} ${resource}`),
    immutable: (kind, field) => {
      store.setImmutable(kind, field);
    },
    edit: (kind, namespace, name, mutate, manager = "kubectl-edit") => {
      const type = typeOfKind(kind);
      store.update(
        type,
        nsOf(type, namespace),
        name,
        (o) => {
          mutate(o);
          return o;
        },
        manager,
      );
    },
    put: (object, manager = "someone-else") => {
      const type = store.typeOf(String(object.apiVersion), String(object.kind));
      const metadata = isJsonObject(object.metadata) ? object.metadata : {};
      const namespace = type.namespaced
        ? typeof metadata.namespace === "string"
          ? metadata.namespace
          : "default"
        : "";
      store.apply(type, namespace, String(metadata.name), object, {
        manager,
        force: true,
      });
    },
    remove: (kind, namespace, name) => {
      const type = typeOfKind(kind);
      store.delete(type, nsOf(type, namespace), name);
    },
    objects: (kind) =>
      store
        .types()
        .filter(
          (x, i, all) =>
            (kind === undefined || x.kind === kind) &&
            all.findIndex(
              (y) => y.group === x.group && y.plural === x.plural,
            ) === i,
        )
        .flatMap((x) => store.list(x, undefined)),
    object: (kind, namespace, name) => {
      try {
        const type = typeOfKind(kind);
        return store.get(type, nsOf(type, namespace), name);
      } catch {
        return undefined;
      }
    },
    requests: () => [...log],
    close,
    [Symbol.asyncDispose]: close,
  };
}
