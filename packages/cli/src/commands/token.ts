/**
 * `flotilla token create|list|revoke`: bootstrap tokens, with which an agent registers its cluster
 * once. The secret is printed once, at creation; the hub keeps only its digest.
 */
import { compact, formatProblems, parseDuration } from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import { EXIT_OK } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
} from "../hub/admin-command.js";
import { present } from "../hub/answer.js";
import { printJson, printLines } from "../hub/output.js";
import { renderTable } from "../render/table.js";
import { formatInstant } from "../render/time.js";
import type { Noun } from "./command.js";

/** What a token's state reads as in tables. */
export function tokenState(
  token: wire.BootstrapToken__Output,
  nowMs: number,
): string {
  if (token.revoked) return "Revoked";
  if (token.expiresAtMs <= nowMs) return "Expired";
  if (token.uses >= token.maxUses) return "Used up";
  return "Active";
}

const create = adminCommand({
  name: "token create",
  summary: "create a bootstrap token for an agent to register with",
  description:
    "Creates a bootstrap token and prints its secret once: give it to the agent that is to register\n" +
    "(the hub keeps only a digest). With --cluster, the token registers only that cluster.",
  options: {
    ttl: {
      type: "string",
      valueName: "DURATION",
      required: true,
      description: "how long the token may be used, e.g. 24h (at most 30 days)",
    },
    "max-uses": {
      type: "string",
      valueName: "N",
      description: "how many registrations it allows (default 1)",
    },
    cluster: {
      type: "string",
      valueName: "NAME",
      description: "the only cluster it may register",
    },
  },
  mutating: true,
  prepare: (args) => {
    const problems: string[] = [];
    const ttlText = args.string("ttl") ?? "";
    const ttl = parseDuration(ttlText);
    let ttlSeconds = 0;
    if (!ttl.ok)
      problems.push(
        usageMessage(
          "token create",
          `--ttl ${formatProblems(ttl.problems)} (got "${ttlText}")`,
        ),
      );
    else if (ttl.value < 1000 || ttl.value % 1000 !== 0)
      problems.push(
        usageMessage(
          "token create",
          `--ttl must be a whole number of seconds, at least 1s (got "${ttlText}")`,
        ),
      );
    else ttlSeconds = ttl.value / 1000;
    const usesText = args.string("max-uses");
    let maxUses = 1;
    if (usesText !== undefined) {
      maxUses = Number(usesText);
      if (!/^\d{1,9}$/.test(usesText) || maxUses < 1)
        problems.push(
          usageMessage(
            "token create",
            `--max-uses must be a whole number from 1 (got "${usesText}")`,
          ),
        );
    }
    if (problems.length > 0) return refused(problems);
    const cluster = args.string("cluster");
    return prepared({
      ttlSeconds,
      maxUses,
      ...compact({ clusterName: cluster }),
    });
  },
  run: async (ctx, request) => {
    const answer = await ctx.hub.call("createBootstrapToken", {
      ...request,
      reason: ctx.reason,
    });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const token = present(answer.token, "token");
    const uses =
      token.maxUses === 1 ? "1 use" : `${String(token.maxUses)} uses`;
    printLines(ctx.io, [
      `Bootstrap token ${token.id} created: ${uses}, expires ${formatInstant(token.expiresAtMs)}` +
        (token.clusterName === undefined || token.clusterName === null
          ? ", any cluster name."
          : `, cluster ${token.clusterName} only.`),
      "Secret (shown only now; give it to the agent that is to register):",
      `  ${answer.secret}`,
    ]);
    return EXIT_OK;
  },
});

const list = adminCommand({
  name: "token list",
  summary: "list bootstrap tokens (never their secrets)",
  description:
    "Lists the bootstrap tokens: id, the cluster it is bound to, uses, expiry and state\n" +
    "(Active, Used up, Expired, Revoked).",
  prepare: () => prepared(undefined),
  run: async (ctx) => {
    const { tokens } = await ctx.hub.call("listBootstrapTokens", {});
    if (ctx.json) {
      printJson(ctx.io, { tokens });
      return EXIT_OK;
    }
    if (tokens.length === 0) {
      printLines(ctx.io, ["No bootstrap tokens."]);
      return EXIT_OK;
    }
    const now = ctx.io.now();
    printLines(
      ctx.io,
      renderTable(
        [
          { header: "ID", cell: (t: wire.BootstrapToken__Output) => t.id },
          { header: "CLUSTER", cell: (t) => t.clusterName ?? "*" },
          {
            header: "USES",
            cell: (t) => `${String(t.uses)}/${String(t.maxUses)}`,
            align: "right",
          },
          { header: "EXPIRES", cell: (t) => formatInstant(t.expiresAtMs) },
          { header: "STATE", cell: (t) => tokenState(t, now) },
          { header: "CREATED BY", cell: (t) => t.createdBy },
        ],
        tokens,
        ctx.render.style,
      ),
    );
    return EXIT_OK;
  },
});

const revoke = adminCommand({
  name: "token revoke",
  summary: "revoke a bootstrap token",
  description:
    "Revokes the token: agents can no longer register with it. Clusters that already registered\n" +
    "keep their identities (remove a cluster with flotilla cluster remove).",
  positionals: [{ name: "ID", description: "the token's id (see token list)" }],
  mutating: true,
  prepare: (args) => prepared(args.positional("ID") ?? ""),
  run: async (ctx, id) => {
    const answer = await ctx.hub.call("revokeBootstrapToken", {
      id,
      reason: ctx.reason,
    });
    if (ctx.json) printJson(ctx.io, answer);
    else printLines(ctx.io, [`Bootstrap token ${id} revoked.`]);
    return EXIT_OK;
  },
});

/** `flotilla token …`. */
export const tokenNoun: Noun = {
  name: "token",
  summary: "create, list and revoke agents' bootstrap tokens",
  verbs: [create, list, revoke],
};
