/**
 * Who is calling the hub (docs/security.md): the vocabulary shared by the
 * certificate authority, agent registration, admin authentication and the audit log.
 *
 * Identities travel in X.509 certificates issued by the hub's CA, as one URI subject alternative
 * name each:
 *
 * * an agent of cluster `NAME`: `spiffe://flotilla/cluster/NAME`;
 * * a person or tool with role `ROLE`: `spiffe://flotilla/admin/ROLE/NAME`.
 *
 * Admin callers may also present a bearer token (`authorization: Bearer …`) named in the hub's
 * admin token file; that gives the same {@link AdminIdentity}.
 */

/** Admin roles, weakest first: each includes what the ones before it may do. */
export const ADMIN_ROLES = ["viewer", "operator", "admin"] as const;

/** One of {@link ADMIN_ROLES}. */
export type AdminRole = (typeof ADMIN_ROLES)[number];

/** URI SAN prefix of a cluster's (agent's) certificate. */
export const CLUSTER_URI_PREFIX = "spiffe://flotilla/cluster/";

/** URI SAN prefix of an admin certificate; the role and the name follow, `ROLE/NAME`. */
export const ADMIN_URI_PREFIX = "spiffe://flotilla/admin/";

/** Names of admin identities: 1 to 64 of a-z, 0-9, `.`, `_`, `@`, `-`, starting alphanumeric. */
export const ADMIN_NAME_PATTERN = /^[a-z0-9][-a-z0-9._@]{0,63}$/;

/** An agent, authenticated by its cluster certificate. */
export interface ClusterIdentity {
  readonly kind: "cluster";
  readonly cluster: string;
  /** Certificate serial number (hex), for the audit log and revocation. */
  readonly serial: string;
  readonly expiresAtMs: number;
}

/** A person or tool calling AdminService. */
export interface AdminIdentity {
  readonly kind: "admin";
  readonly name: string;
  readonly role: AdminRole;
  /** How it was authenticated. */
  readonly via: "certificate" | "token" | "insecure";
}

/** Either kind of caller. */
export type PeerIdentity = ClusterIdentity | AdminIdentity;

/** Whether `role` may do what `needed` may. */
export function roleAllows(role: AdminRole, needed: AdminRole): boolean {
  return ADMIN_ROLES.indexOf(role) >= ADMIN_ROLES.indexOf(needed);
}

/** The URI SAN of cluster `cluster`'s certificate. */
export function clusterUri(cluster: string): string {
  return `${CLUSTER_URI_PREFIX}${cluster}`;
}

/** The URI SAN of an admin certificate. */
export function adminUri(role: AdminRole, name: string): string {
  return `${ADMIN_URI_PREFIX}${role}/${name}`;
}

/** Whether `value` is an {@link AdminRole}. */
export function isAdminRole(value: string): value is AdminRole {
  return (ADMIN_ROLES as readonly string[]).includes(value);
}
