/**
 * `flotilla admin-cert issue`: a client certificate for a person or tool, signed by the hub's CA.
 * The key is generated here and never leaves this machine: the hub receives a certificate signing
 * request (hub/csr.ts) and answers with the certificate and its CA. Nothing is written unless the
 * hub issues the certificate.
 */
import { join, resolve } from "node:path";
import { FlotillaError, formatProblems, parseDuration } from "@flotilla/core";
import { EXIT_OK } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
} from "../hub/admin-command.js";
import { generateKeyAndCsr } from "../hub/csr.js";
import { printJson, printLines } from "../hub/output.js";
import { formatInstant } from "../render/time.js";
import type { Noun } from "./command.js";

const ROLES = ["viewer", "operator", "admin"] as const;
const NAME_PATTERN = /^[a-z0-9][-a-z0-9._@]{0,63}$/;
const COMMAND = "admin-cert issue";

const issue = adminCommand({
  name: COMMAND,
  summary: "issue an admin client certificate (key generated locally)",
  description:
    "Generates an ECDSA P-256 key here, asks the hub to certify it for NAME with ROLE, and writes\n" +
    "DIR/key.pem (mode 0600), DIR/cert.pem and DIR/ca.pem. Prints the config set-context line\n" +
    "that uses them. Needs the admin role.",
  options: {
    name: {
      type: "string",
      valueName: "NAME",
      required: true,
      description: "who the certificate names: 1-64 of a-z, 0-9, ., _, @, -",
    },
    role: {
      type: "string",
      valueName: "ROLE",
      required: true,
      choices: ROLES,
      description: "what it may do: viewer, operator or admin",
    },
    ttl: {
      type: "string",
      valueName: "DURATION",
      description: "how long it is valid (default 720h; at most 365 days)",
    },
    out: {
      type: "string",
      valueName: "DIR",
      required: true,
      description: "directory to write key.pem, cert.pem and ca.pem to",
    },
  },
  mutating: true,
  prepare: async (args, io) => {
    const problems: string[] = [];
    const name = args.string("name") ?? "";
    if (!NAME_PATTERN.test(name))
      problems.push(
        usageMessage(
          COMMAND,
          `--name must be 1 to 64 of a-z, 0-9, ., _, @, -, starting with a letter or digit (got "${name}")`,
        ),
      );
    const ttlText = args.string("ttl") ?? "720h";
    const ttl = parseDuration(ttlText);
    let ttlSeconds = 0;
    if (!ttl.ok)
      problems.push(
        usageMessage(
          COMMAND,
          `--ttl ${formatProblems(ttl.problems)} (got "${ttlText}")`,
        ),
      );
    else if (ttl.value < 1000 || ttl.value % 1000 !== 0)
      problems.push(
        usageMessage(
          COMMAND,
          `--ttl must be a whole number of seconds, at least 1s (got "${ttlText}")`,
        ),
      );
    else ttlSeconds = ttl.value / 1000;
    const dir = resolve(args.string("out") ?? ".");
    const keyFile = join(dir, "key.pem");
    const exists = await io.readBytes(keyFile).then(
      () => true,
      () => false,
    );
    if (exists)
      problems.push(
        usageMessage(
          COMMAND,
          `${keyFile} already exists: choose another --out, or move it away first`,
        ),
      );
    if (problems.length > 0) return refused(problems);
    return prepared({ name, role: args.string("role") ?? "", ttlSeconds, dir });
  },
  run: async (ctx, input) => {
    const { keyPem, csrPem } = await generateKeyAndCsr(input.name);
    const answer = await ctx.hub.call("issueAdminCertificate", {
      name: input.name,
      role: input.role,
      csrPem,
      ttlSeconds: input.ttlSeconds,
      reason: ctx.reason,
    });
    if (answer.certificatePem === "" || answer.caCertificatePem === "") {
      throw new FlotillaError(
        "internal",
        "The hub's answer has no certificate",
      );
    }
    const files = {
      key: join(input.dir, "key.pem"),
      cert: join(input.dir, "cert.pem"),
      ca: join(input.dir, "ca.pem"),
    };
    await ctx.io.writeFile(files.key, keyPem, 0o600);
    await ctx.io.writeFile(files.cert, answer.certificatePem, 0o644);
    await ctx.io.writeFile(files.ca, answer.caCertificatePem, 0o644);
    const setContext =
      `flotilla config set-context ${input.name} --hub ${ctx.hub.address} ` +
      `--ca ${files.ca} --cert ${files.cert} --key ${files.key}`;
    if (ctx.json) {
      printJson(ctx.io, {
        name: input.name,
        role: input.role,
        expiresAtMs: answer.expiresAtMs,
        keyFile: files.key,
        certFile: files.cert,
        caFile: files.ca,
        setContext,
      });
      return EXIT_OK;
    }
    printLines(ctx.io, [
      `Certificate for ${input.name} (role ${input.role}) issued, valid until ${formatInstant(answer.expiresAtMs)}.`,
      `  Key:          ${files.key} (mode 0600; it never left this machine)`,
      `  Certificate:  ${files.cert}`,
      `  Hub CA:       ${files.ca}`,
      "Use it with:",
      `  ${setContext}`,
    ]);
    return EXIT_OK;
  },
});

/** `flotilla admin-cert …`. */
export const adminCertNoun: Noun = {
  name: "admin-cert",
  summary: "issue client certificates for people and tools",
  verbs: [issue],
};
