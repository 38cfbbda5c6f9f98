/**
 * The identity part of the agent's configuration: where each cluster's identity is kept
 * and where the bootstrap token comes from, and how those settings go with the transport flags.
 * config.ts parses; this module holds the types and the cross-setting rules.
 */

/**
 * Where the bootstrap token comes from: a file, or the environment. Never a flag value, which
 * any user could read in `ps`.
 */
export type BootstrapTokenSource =
  | { readonly type: "file"; readonly file: string }
  | { readonly type: "env"; readonly variable: string; readonly value: string };

/**
 * The cluster identity the agent registers for and keeps (TLS without `--tls-cert`), in files or,
 * with the Kubernetes backend and no `--identity-dir`, in a Secret.
 */
export type IdentityConfig = (
  | {
      /** One subdirectory per cluster: `DIR/<cluster>/` (identity/identity-store.ts). */
      readonly dir: string;
    }
  | {
      /** A Secret in the backend's namespace (identity/secret-identity-store.ts). */
      readonly secret: string;
    }
) & {
  /** Used only when a cluster has no valid identity yet. */
  readonly bootstrapToken?: BootstrapTokenSource;
};

/** The environment variable that may hold the bootstrap token itself (there is no such flag). */
export const BOOTSTRAP_TOKEN_ENV = "FLOTILLA_BOOTSTRAP_TOKEN";

/** How identity settings combine with the transport; one line per problem. */
export function checkIdentitySettings(given: {
  readonly tls: boolean;
  readonly plaintext: boolean;
  readonly clientCertificate: boolean;
  readonly identityDir: boolean;
  readonly stateDir: boolean;
  readonly tokenFile: boolean;
  readonly tokenEnv: boolean;
  /** The flag or variable a setting came from, for messages. */
  readonly where: (
    key: "bootstrapTokenFile" | "identityDir" | "insecurePlaintext" | "tlsCert",
  ) => string;
}): string[] {
  const { where } = given;
  const problems: string[] = [];
  const token = given.tokenFile || given.tokenEnv;
  const tokenWhere = given.tokenFile
    ? where("bootstrapTokenFile")
    : BOOTSTRAP_TOKEN_ENV;
  if (given.tokenFile && given.tokenEnv)
    problems.push(
      `${where("bootstrapTokenFile")} and ${BOOTSTRAP_TOKEN_ENV}: choose one`,
    );
  if (given.plaintext && (token || given.identityDir))
    problems.push(
      `${token ? tokenWhere : where("identityDir")}: registration needs TLS and does not apply with ${where("insecurePlaintext")}`,
    );
  else if (given.clientCertificate && (token || given.identityDir))
    problems.push(
      `${token ? tokenWhere : where("identityDir")}: does not apply with ${where("tlsCert")}, which is already the client certificate`,
    );
  else if (
    given.tls &&
    !given.clientCertificate &&
    !given.identityDir &&
    !given.stateDir
  )
    problems.push(
      "The hub needs a client certificate: pass --state-dir DIR or --identity-dir DIR to keep the cluster's identity, with --bootstrap-token-file FILE (or FLOTILLA_BOOTSTRAP_TOKEN) to register it, or pass --tls-cert FILE and --tls-key FILE",
    );
  return problems;
}
