/**
 * AdminService: bootstrap tokens and admin certificates. Every request is validated
 * before anything is stored (INVALID_ARGUMENT with every problem's path); every state-changing
 * call is audited, the token's id named even when its creation fails. Secrets appear in the one
 * CreateBootstrapToken response only: never in the audit log, a log line or an error.
 *
 * Which roles may call these is admin authentication's business (security/admin-roles.ts).
 */
import {
  FlotillaError,
  showValue,
  type Problem,
  compact,
} from "@flotilla/core";
import { intentKeyProblem, type wire } from "@flotilla/protocol";
import type {
  BootstrapTokenRecord,
  BootstrapTokens,
} from "../security/bootstrap-tokens.js";
import {
  MAX_TOKEN_TTL_MS,
  MAX_TOKEN_USES,
} from "../security/bootstrap-tokens.js";
import type { CertificateAuthority } from "../security/certificate-authority.js";
import {
  ADMIN_NAME_PATTERN,
  ADMIN_ROLES,
  isAdminRole,
} from "../security/identity.js";
import { audited, unary, type AuditDeps } from "./unary.js";

type Handlers = wire.AdminServiceHandlers;

const DAY_MS = 24 * 3_600_000;

/** An admin certificate's lifetime when the request gives none. */
export const DEFAULT_ADMIN_CERT_TTL_MS = 30 * DAY_MS;

/** The longest an admin certificate may live. */
export const MAX_ADMIN_CERT_TTL_MS = 365 * DAY_MS;

export interface SecurityHandlerDeps extends AuditDeps {
  readonly tokens: BootstrapTokens;
  /** Absent in plaintext mode: admin certificates cannot be issued. */
  readonly authority: CertificateAuthority | undefined;
}

/** A stored token as the wire shows it (no secret, no hash). */
export function bootstrapTokenToWire(
  token: BootstrapTokenRecord,
): wire.BootstrapToken {
  return {
    id: token.id,
    ...compact({ clusterName: token.clusterName }),
    createdAtMs: token.createdAtMs,
    expiresAtMs: token.expiresAtMs,
    maxUses: token.maxUses,
    uses: token.uses,
    revoked: token.revoked,
    createdBy: token.createdBy,
  };
}

function ttlProblem(
  seconds: number,
  path: string,
  maxMs: number,
): Problem | undefined {
  if (!Number.isSafeInteger(seconds) || seconds * 1000 > maxMs) {
    return {
      path,
      message: `must be at most ${String(maxMs / 1000)} seconds (${String(maxMs / DAY_MS)} days)`,
      value: seconds,
    };
  }
  return undefined;
}

export function securityHandlers(
  deps: SecurityHandlerDeps,
): Pick<
  Handlers,
  | "CreateBootstrapToken"
  | "ListBootstrapTokens"
  | "RevokeBootstrapToken"
  | "IssueAdminCertificate"
> {
  const createToken = (
    request: wire.CreateBootstrapTokenRequest__Output,
    actor: string,
    id: string,
  ) => {
    const problems: Problem[] = [];
    const { ttlSeconds, maxUses, clusterName } = request;
    if (ttlSeconds === 0) {
      problems.push({
        path: "ttlSeconds",
        message:
          "is required: how long the token may be used, e.g. 86400 (1 day)",
        value: ttlSeconds,
      });
    } else {
      const problem = ttlProblem(ttlSeconds, "ttlSeconds", MAX_TOKEN_TTL_MS);
      if (problem !== undefined) problems.push(problem);
    }
    if (maxUses > MAX_TOKEN_USES) {
      problems.push({
        path: "maxUses",
        message: `must be at most ${String(MAX_TOKEN_USES)} (0 means 1)`,
        value: maxUses,
      });
    }
    const nameProblem =
      clusterName === undefined ? undefined : intentKeyProblem(clusterName);
    if (nameProblem !== undefined) {
      problems.push({
        path: "clusterName",
        message: nameProblem,
        value: clusterName,
      });
    }
    if (problems.length > 0) {
      throw FlotillaError.invalid("bootstrap token", problems);
    }
    return deps.tokens.create(id, {
      ttlMs: ttlSeconds * 1000,
      maxUses: maxUses === 0 ? 1 : maxUses,
      ...compact({ clusterName }),
      createdBy: actor,
    });
  };

  return {
    CreateBootstrapToken: unary((request, context) => {
      // The id exists before the token, so that a failed creation is audited under it too.
      const id = deps.tokens.newId();
      return audited(
        deps,
        {
          method: "CreateBootstrapToken",
          targetKind: "bootstrap-token",
          targetName: () => id,
          reason: (r: wire.CreateBootstrapTokenRequest__Output) => r.reason,
        },
        async (r: wire.CreateBootstrapTokenRequest__Output, c) => {
          const { token, secret } = await createToken(r, c.actor, id);
          return { token: bootstrapTokenToWire(token), secret };
        },
      )(request, context);
    }),

    ListBootstrapTokens: unary(async (_request, context) => ({
      tokens: (await deps.tokens.list({ signal: context.signal })).map(
        bootstrapTokenToWire,
      ),
    })),

    RevokeBootstrapToken: unary(
      audited(
        deps,
        {
          method: "RevokeBootstrapToken",
          targetKind: "bootstrap-token",
          targetName: (r) => r.id,
          reason: (r) => r.reason,
        },
        async (request) => {
          if (request.id === "") {
            throw FlotillaError.invalid("revocation", [
              {
                path: "id",
                message: "is required: a token id like bt-1a2b3c4d",
              },
            ]);
          }
          return {
            token: bootstrapTokenToWire(await deps.tokens.revoke(request.id)),
          };
        },
      ),
    ),

    IssueAdminCertificate: unary(
      audited(
        deps,
        {
          method: "IssueAdminCertificate",
          targetKind: "admin-certificate",
          targetName: (r) => `${r.role}/${r.name}`,
          reason: (r) => r.reason,
        },
        async (request) => {
          const problems: Problem[] = [];
          const { name, role, ttlSeconds } = request;
          if (!ADMIN_NAME_PATTERN.test(name)) {
            problems.push({
              path: "name",
              message:
                "must be 1 to 64 of a-z, 0-9, '.', '_', '@' and '-', starting with a letter or digit",
              value: name,
            });
          }
          if (!isAdminRole(role)) {
            problems.push({
              path: "role",
              message: `must be one of ${ADMIN_ROLES.join(", ")}`,
              value: role,
            });
          }
          const ttl = ttlProblem(
            ttlSeconds,
            "ttlSeconds",
            MAX_ADMIN_CERT_TTL_MS,
          );
          if (ttl !== undefined) problems.push(ttl);
          if (problems.length > 0 || !isAdminRole(role)) {
            throw FlotillaError.invalid("admin certificate request", problems);
          }
          if (deps.authority === undefined) {
            throw new FlotillaError(
              "failed_precondition",
              `Cannot issue a certificate for ${showValue(name)}: this hub serves plaintext (--insecure-plaintext) and has no CA`,
            );
          }
          const issued = await deps.authority.issueClientCertificate(
            request.csrPem,
            { kind: "admin", role, name },
            ttlSeconds === 0 ? DEFAULT_ADMIN_CERT_TTL_MS : ttlSeconds * 1000,
          );
          return {
            certificatePem: issued.certificatePem,
            caCertificatePem: deps.authority.certificatePem,
            expiresAtMs: issued.expiresAtMs,
          };
        },
      ),
    ),
  };
}
