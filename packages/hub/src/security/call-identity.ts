/**
 * Who made an AdminService call, as admin authentication found out: attached to the grpc-js call
 * object (a WeakMap, so it goes with the call) by the authentication wrapper and read by
 * `callContext` (grpc/unary.ts), which every handler kind uses for its actor and role.
 */
import type { AdminIdentity, AdminRole } from "./identity.js";

/** The authenticated caller of one call. */
export interface CallIdentity {
  readonly identity: AdminIdentity;
  /** What the audit log and run history record: `NAME`, `token:NAME`, or the dev-mode header. */
  readonly actor: string;
  readonly role: AdminRole;
}

const identities = new WeakMap<object, CallIdentity>();

/** Records that `call` was made by `who`. */
export function setCallIdentity(call: object, who: CallIdentity): void {
  identities.set(call, who);
}

/** The authenticated caller of `call`, if authentication ran for it. */
export function callIdentity(call: object): CallIdentity | undefined {
  return identities.get(call);
}

/** The actor recorded for `identity` (insecure mode's actor comes from the caller's header). */
export function actorOfIdentity(identity: AdminIdentity): string {
  switch (identity.via) {
    case "certificate":
      return identity.name;
    case "token":
      return `token:${identity.name}`;
    case "insecure":
      return identity.name;
  }
}
