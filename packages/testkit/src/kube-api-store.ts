/**
 * The object store behind the local Kubernetes API server: objects keyed by group, resource,
 * namespace and name; a global resourceVersion counter; `generation` bumped when anything outside
 * `metadata` and `status` changes; server-side apply with per-manager field ownership (a field
 * another manager owns with a different value is a 409 Conflict unless `force`); updates that take
 * ownership of the fields they change (merge patches, test edits); namespaces that must exist;
 * CustomResourceDefinitions whose kinds become servable once their `Established` condition is True;
 * and an event history for watches. Errors are {@link KubeApiError}s with Kubernetes' status codes.
 */
import {
  cloneJson,
  deletePath,
  isJsonObject,
  getPath,
  jsonEqual,
  type FieldPath,
  type JsonObject,
} from "./kube-api-fields.js";
import {
  BUILTIN_TYPES,
  crdTypes,
  initialStatus,
  isEstablished,
  sameResourceAs,
  groupVersion,
  type ResourceType,
} from "./kube-api-kinds.js";
import { KubeApiError } from "./kube-api-error.js";
import {
  applyOwnership,
  managedFields,
  updateOwnership,
  type Owners,
} from "./kube-api-ownership.js";
import { validateObject } from "./kube-api-validate.js";

export { KubeApiError };

/** One change, as a watch reports it. */
export interface StoreEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly resource: ResourceType;
  readonly object: JsonObject;
  /** The object before a MODIFIED change (a watch whose selector it left reports DELETED). */
  readonly previous?: JsonObject | undefined;
  readonly resourceVersion: number;
}

interface Stored {
  type: ResourceType;
  object: JsonObject;
  owners: Owners;
}

// Fields the server owns; an apply configuration's values for them are ignored.
const SERVER_FIELDS: readonly FieldPath[] = [
  ["apiVersion"],
  ["kind"],
  ["metadata", "name"],
  ["metadata", "namespace"],
  ["metadata", "uid"],
  ["metadata", "resourceVersion"],
  ["metadata", "generation"],
  ["metadata", "creationTimestamp"],
  ["metadata", "managedFields"],
];

function meta(object: JsonObject): JsonObject {
  return isJsonObject(object.metadata) ? object.metadata : {};
}

function nsOfObject(object: JsonObject): string {
  const { namespace } = meta(object);
  return typeof namespace === "string" ? namespace : "";
}

function withoutServerFields(
  object: JsonObject,
  type: ResourceType,
): JsonObject {
  const copy = cloneJson(object);
  for (const path of SERVER_FIELDS) deletePath(copy, path);
  if (type.hasStatus) Reflect.deleteProperty(copy, "status");
  return copy;
}

function specOf(object: JsonObject): JsonObject {
  const rest = cloneJson(object);
  for (const key of ["apiVersion", "kind", "metadata", "status"])
    Reflect.deleteProperty(rest, key);
  return rest;
}

/** See the module comment. */
export class KubeStore {
  private resourceVersion = 0;
  private readonly stored = new Map<string, Stored>();
  private readonly served: ResourceType[] = [...BUILTIN_TYPES];
  private readonly listeners = new Set<(event: StoreEvent) => void>();
  /** Every change since the start, oldest first, for watches that resume from a resourceVersion. */
  readonly history: StoreEvent[] = [];

  constructor(private readonly establishCrds: boolean) {
    for (const name of ["default", "kube-system"])
      this.commit(
        this.typeOf("v1", "Namespace"),
        "",
        name,
        { metadata: { name } },
        undefined,
      );
  }

  /** The resource types served now. */
  types(): readonly ResourceType[] {
    return this.served;
  }

  /** The current resourceVersion (of the last change). */
  version(): number {
    return this.resourceVersion;
  }

  /** The type serving `apiVersion`/`kind`; throws NotFound when it is not served. */
  typeOf(apiVersion: string, kind: string): ResourceType {
    const type = this.served.find(
      (x) => groupVersion(x) === apiVersion && x.kind === kind,
    );
    if (type === undefined)
      throw new KubeApiError(
        404,
        "NotFound",
        `the server could not find the requested resource (${apiVersion} ${kind})`,
      );
    return type;
  }

  /** The type at a URL's group, version and plural, or undefined. */
  findType(
    group: string,
    version: string,
    plural: string,
  ): ResourceType | undefined {
    return this.served.find(
      (x) => x.group === group && x.version === version && x.plural === plural,
    );
  }

  /** Calls `listener` with every change until the returned function is called. */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A copy of one object; throws NotFound. */
  get(type: ResourceType, namespace: string, name: string): JsonObject {
    return this.render(this.require(type, namespace, name), type);
  }

  /** Copies of every object of a type, in one namespace or (undefined) all. */
  list(type: ResourceType, namespace: string | undefined): JsonObject[] {
    return [...this.stored.values()]
      .filter(
        (s) => s.type.group === type.group && s.type.plural === type.plural,
      )
      .filter(
        (s) =>
          namespace === undefined || meta(s.object).namespace === namespace,
      )
      .map((s) => this.render(s, type));
  }

  /** Server-side apply of `body` by `manager`; see the module comment. */
  apply(
    type: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    options: { manager: string; force: boolean; dryRun?: boolean },
  ): JsonObject {
    const object = validateObject(type, namespace, name, body);
    const config = withoutServerFields(object, type);
    const existing = this.stored.get(this.key(type, namespace, name));
    const { live, owners } = applyOwnership(
      existing ? cloneJson(existing.object) : { metadata: { name } },
      existing?.owners ?? new Map(),
      config,
      options,
    );
    return this.commit(
      type,
      namespace,
      name,
      live,
      existing,
      owners,
      options.dryRun,
    );
  }

  /** Creates an object (POST); AlreadyExists when it is there. */
  create(
    type: ResourceType,
    namespace: string,
    body: unknown,
    manager: string,
  ): JsonObject {
    const name =
      isJsonObject(body) && isJsonObject(body.metadata)
        ? body.metadata.name
        : undefined;
    const object = validateObject(
      type,
      namespace,
      typeof name === "string" ? name : "",
      body,
    );
    if (this.stored.has(this.key(type, namespace, String(name))))
      throw new KubeApiError(
        409,
        "AlreadyExists",
        `${type.plural} "${String(name)}" already exists`,
      );
    const config = withoutServerFields(object, type);
    const owners = updateOwnership(new Map(), {}, config, manager);
    return this.commit(
      type,
      namespace,
      String(name),
      config,
      undefined,
      owners,
    );
  }

  /**
   * Changes an object the way an update does (merge patch, `kubectl edit`): `mutate` returns the
   * new object; `manager` takes ownership of every field whose value changed.
   */
  update(
    type: ResourceType,
    namespace: string,
    name: string,
    mutate: (object: JsonObject) => unknown,
    manager: string,
  ): JsonObject {
    const existing = this.require(type, namespace, name);
    const next = validateObject(
      type,
      namespace,
      name,
      mutate(this.render(existing, type)),
    );
    const before = withoutServerFields(existing.object, type);
    const after = withoutServerFields(next, type);
    const owners = updateOwnership(existing.owners, before, after, manager);
    if (type.hasStatus && existing.object.status !== undefined)
      after.status = existing.object.status;
    return this.commit(type, namespace, name, after, existing, owners);
  }

  /** Replaces an object's `status` (the `/status` subresource); generation is unchanged. */
  writeStatus(
    type: ResourceType,
    namespace: string,
    name: string,
    status: unknown,
  ): JsonObject {
    const existing = this.require(type, namespace, name);
    const live = cloneJson(existing.object);
    live.status = cloneJson(status);
    return this.commit(type, namespace, name, live, existing, existing.owners);
  }

  /** Deletes an object (and a namespace's objects, a CRD's custom objects); throws NotFound. */
  delete(type: ResourceType, namespace: string, name: string): JsonObject {
    const existing = this.require(type, namespace, name);
    this.resourceVersion++;
    const last = this.render(existing, type);
    (last.metadata as JsonObject).resourceVersion = String(
      this.resourceVersion,
    );
    this.stored.delete(this.key(type, namespace, name));
    this.emit("DELETED", type, last);
    if (type.kind === "Namespace")
      for (const s of [...this.stored.values()])
        if (meta(s.object).namespace === name)
          this.delete(s.type, name, String(meta(s.object).name));
    if (type.kind === "CustomResourceDefinition")
      this.unregister(existing.object);
    return last;
  }

  private require(type: ResourceType, namespace: string, name: string): Stored {
    const found = this.stored.get(this.key(type, namespace, name));
    if (found === undefined) {
      const what =
        type.group === "" ? type.plural : `${type.plural}.${type.group}`;
      throw new KubeApiError(404, "NotFound", `${what} "${name}" not found`);
    }
    return found;
  }

  /** Fields (dotted paths) that may not change once an object of the kind exists, by kind. */
  private readonly immutable = new Map<string, string[]>();

  /** Makes `field` (`spec.selector`) of existing objects of `kind` immutable. */
  setImmutable(kind: string, field: string): void {
    this.immutable.set(kind, [...(this.immutable.get(kind) ?? []), field]);
  }

  private checkImmutable(
    type: ResourceType,
    name: string,
    old: JsonObject,
    next: JsonObject,
  ): void {
    for (const field of this.immutable.get(type.kind) ?? []) {
      const path = field.split(".");
      const value = getPath(next, path);
      if (jsonEqual(getPath(old, path), value)) continue;
      const what = type.group === "" ? type.kind : `${type.kind}.${type.group}`;
      throw new KubeApiError(
        422,
        "Invalid",
        `${what} "${name}" is invalid: ${field}: Invalid value: ${JSON.stringify(value ?? null)}: field is immutable`,
      );
    }
  }

  private key(type: ResourceType, namespace: string, name: string): string {
    return `${type.group}|${type.plural}|${type.namespaced ? namespace : ""}|${name}`;
  }

  private commit(
    type: ResourceType,
    namespace: string,
    name: string,
    content: JsonObject,
    existing: Stored | undefined,
    owners: Owners = new Map(),
    dryRun = false,
  ): JsonObject {
    if (
      type.namespaced &&
      !this.stored.has(this.key(this.typeOf("v1", "Namespace"), "", namespace))
    )
      throw new KubeApiError(
        404,
        "NotFound",
        `namespaces "${namespace}" not found`,
      );
    if (type.kind === "CustomResourceDefinition") {
      const defined = crdTypes(content);
      if (typeof defined === "string")
        throw new KubeApiError(
          422,
          "Invalid",
          `CustomResourceDefinition.apiextensions.k8s.io "${name}" is invalid: ${defined}`,
        );
    }
    const object = cloneJson(content);
    const metadata = meta(object);
    const old = existing?.object;
    if (old !== undefined) this.checkImmutable(type, name, old, object);
    const oldMeta = old ? meta(old) : {};
    object.apiVersion = groupVersion(type);
    object.kind = type.kind;
    object.metadata = {
      ...metadata,
      name,
      ...(type.namespaced ? { namespace } : {}),
      uid: oldMeta.uid ?? crypto.randomUUID(),
      creationTimestamp: oldMeta.creationTimestamp ?? new Date().toISOString(),
      generation:
        old === undefined
          ? 1
          : Number(oldMeta.generation) +
            (jsonEqual(specOf(old), specOf(object)) ? 0 : 1),
      resourceVersion: oldMeta.resourceVersion,
    };
    const changed =
      old === undefined ||
      !jsonEqual(old, object) ||
      !jsonEqual(
        managedFields(existing?.owners, groupVersion(type)),
        managedFields(owners, groupVersion(type)),
      );
    if (!changed && existing !== undefined) return this.render(existing, type);
    // A dry run answers what would be stored, changing nothing.
    if (dryRun) return this.render({ type, object, owners }, type);
    this.resourceVersion++;
    (object.metadata as JsonObject).resourceVersion = String(
      this.resourceVersion,
    );
    const initial =
      old === undefined ? initialStatus(type, this.establishCrds) : undefined;
    if (initial !== undefined) object.status = initial;
    const stored = { type, object, owners };
    this.stored.set(this.key(type, namespace, name), stored);
    const rendered = this.render(stored, type);
    this.emit(
      old === undefined ? "ADDED" : "MODIFIED",
      type,
      rendered,
      existing && this.render(existing, type),
    );
    if (type.kind === "CustomResourceDefinition")
      this.registerIfEstablished(object);
    return rendered;
  }

  private registerIfEstablished(crd: JsonObject): void {
    const defined = crdTypes(crd);
    if (!isEstablished(crd) || typeof defined === "string") return;
    this.unregister(crd, false);
    this.served.push(...defined);
  }

  private unregister(crd: JsonObject, deleteObjects = true): void {
    const same = sameResourceAs(crd);
    if (deleteObjects)
      for (const s of [...this.stored.values()])
        if (same(s.type))
          this.delete(
            s.type,
            nsOfObject(s.object),
            String(meta(s.object).name),
          );
    const kept = this.served.filter((x) => !same(x));
    this.served.splice(0, this.served.length, ...kept);
  }

  private render(stored: Stored, type: ResourceType): JsonObject {
    const object = cloneJson(stored.object);
    object.apiVersion = groupVersion(type);
    object.metadata = {
      ...meta(object),
      managedFields: managedFields(stored.owners, groupVersion(type)),
    };
    return object;
  }

  private emit(
    type: StoreEvent["type"],
    resource: ResourceType,
    object: JsonObject,
    previous?: JsonObject,
  ): void {
    const event = {
      type,
      resource,
      object,
      previous,
      resourceVersion: this.resourceVersion,
    };
    this.history.push(event);
    for (const listener of this.listeners) listener(event);
  }
}
