/**
 * `flotilla run create`: a staged update run of a strategy (stored, or from a file) rolling out an
 * upgrade or a bundle revision. The payload is checked locally with core's rules (through
 * protocol's decoder), so a missing version is refused before the hub is asked.
 */
import {
  formatProblem,
  formatProblems,
  type Problem,
  parseDuration,
  compact,
} from "@flotilla/core";
import {
  NODE_IMAGE_SELECTION,
  upgradePayloadFromWire,
  type wire,
} from "@flotilla/protocol";
import { EXIT_OK } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
} from "../hub/admin-command.js";
import { stripField } from "../hub/file-problems.js";
import { printJson, printLines } from "../hub/output.js";
import { renderRunStatus } from "../render/run-tree.js";
import { warningLines } from "../render/sections.js";
import type { ParsedArgs } from "./command.js";
import { decodeRun } from "./run-decode.js";
import {
  AZ_CREATE_OPTIONS,
  readCreateChoices,
  type CreateChoices,
} from "./run-create-aliases.js";
import { readStrategyFile, STRATEGY_FILE_OPTION } from "./strategy.js";

const COMMAND = "run create";

/** The payload named by the flags, or what is wrong with them. */
function payloadOf(
  args: ParsedArgs,
  choices: CreateChoices,
): {
  payload?: wire.RunPayload;
  problems: string[];
} {
  const version = args.string("kubernetes-version");
  const { imageOnly, controlPlaneOnly } = choices;
  const bundle = args.string("bundle");
  const revision = args.string("revision");
  const kinds = [version !== undefined, imageOnly, bundle !== undefined].filter(
    Boolean,
  ).length;
  if (kinds !== 1)
    return {
      problems: [
        usageMessage(
          COMMAND,
          kinds === 0
            ? "say what to roll out: --kubernetes-version V, --node-image-only, or --bundle B [--revision R]"
            : "give only one of --kubernetes-version, --node-image-only and --bundle",
        ),
      ],
    };
  const problems: string[] = [];
  const misplaced = (flag: string, given: boolean, where: string): void => {
    if (given)
      problems.push(usageMessage(COMMAND, `${flag} goes only with ${where}`));
  };
  misplaced(
    "--revision",
    revision !== undefined && bundle === undefined,
    "--bundle",
  );
  misplaced(
    "--control-plane-only",
    controlPlaneOnly && version === undefined,
    "--kubernetes-version",
  );
  misplaced(
    "--security-patch-only",
    args.flag("security-patch-only") && !imageOnly,
    "--node-image-only",
  );
  misplaced(
    "--long-term-support",
    args.flag("long-term-support") && bundle !== undefined,
    "an upgrade",
  );
  misplaced(
    "--node-image-selection",
    args.string("node-image-selection") !== undefined && bundle !== undefined,
    "an upgrade",
  );
  if (bundle !== undefined) {
    // No revision: the hub takes the bundle's current one (docs/semantics.md#staged-bundle-runs).
    return problems.length > 0
      ? { problems }
      : { payload: { bundle: { bundle, revision: revision ?? "" } }, problems };
  }
  const selection =
    args.string("node-image-selection") === "Consistent"
      ? "Consistent"
      : "Latest";
  const upgrade: wire.UpgradePayload = {
    type: imageOnly
      ? "UPGRADE_TYPE_NODE_IMAGE_ONLY"
      : controlPlaneOnly
        ? "UPGRADE_TYPE_CONTROL_PLANE_ONLY"
        : "UPGRADE_TYPE_FULL",
    ...compact({ kubernetesVersion: version }),
    nodeImageSelection: NODE_IMAGE_SELECTION.toWire(selection),
    securityPatchOnly: args.flag("security-patch-only"),
    requiresLongTermSupport: args.flag("long-term-support"),
  };
  // core's own rules, through protocol's decoder: the version's form, which types need one.
  const checked = upgradePayloadFromWire(
    upgrade as wire.UpgradePayload__Output,
    "",
  );
  if (!checked.ok)
    problems.push(
      ...checked.problems.map((p) => usageMessage(COMMAND, flagProblem(p))),
    );
  return problems.length > 0
    ? { problems }
    : { payload: { upgrade }, problems };
}

/** A payload problem in the words of the flag that set the field. */
function flagProblem(p: Problem): string {
  const path = p.path.replace(/^payload\./, "").replace(/^upgrade\./, "");
  const flag: Record<string, string> = {
    kubernetesVersion: "--kubernetes-version",
    nodeImageSelection: "--node-image-selection",
    securityPatchOnly: "--security-patch-only",
    requiresLongTermSupport: "--long-term-support",
    progressDeadlineSeconds: "--progress-deadline",
    strategyName: "--strategy",
  };
  const name = flag[path];
  return name === undefined
    ? formatProblem(p)
    : `${name}: ${formatProblem({ ...p, path: "" })}`;
}

/** `flotilla run create`. */
export const runCreateCommand = adminCommand({
  name: COMMAND,
  summary: "create a staged update run (it starts with flotilla run start)",
  description: [
    "Creates a run of a strategy (--strategy NAME of a stored one, or -f FILE) that rolls out an",
    "upgrade (--kubernetes-version V, or --node-image-only) or a bundle revision (--bundle B",
    "[--revision R], default the bundle's current revision: its members are the bundle's targets,",
    "and the bundle's partition rollout releases nothing new until the run completes). The members",
    "and limits are frozen now; the run waits for `flotilla run start`.",
    "az fleet's names work too: --update-strategy-name, --upgrade-type Full|ControlPlaneOnly|",
    "NodeImageOnly, --kubernetes-version, --node-image-selection.",
  ].join("\n"),
  positionals: [{ name: "NAME", description: "the run's name" }],
  options: {
    strategy: {
      type: "string",
      valueName: "NAME",
      description: "a stored update strategy",
    },
    file: {
      ...STRATEGY_FILE_OPTION,
      description:
        "an update strategy file instead of a stored one (YAML or JSON)",
    },
    "kubernetes-version": {
      type: "string",
      valueName: "V",
      description:
        "upgrade control plane and nodes to this version, e.g. 1.31.2",
    },
    "control-plane-only": {
      type: "boolean",
      description: "with --kubernetes-version: upgrade only the control plane",
    },
    "node-image-only": {
      type: "boolean",
      description: "upgrade only the node images",
    },
    "security-patch-only": {
      type: "boolean",
      description:
        "with --node-image-only: security patches only (Linux pools)",
    },
    "long-term-support": {
      type: "boolean",
      description:
        "with --kubernetes-version: the target is a minor past standard support; members whose cluster's support plan is not AKSLongTermSupport fail",
    },
    "node-image-selection": {
      type: "string",
      choices: ["Latest", "Consistent"],
      description:
        "newest image per member at its start (default), or one version per image family for all",
    },
    bundle: {
      type: "string",
      valueName: "B",
      description:
        "roll out a revision of this bundle to its targets, stage by stage",
    },
    revision: {
      type: "string",
      valueName: "R",
      description:
        "with --bundle: the revision (default: the bundle's current one)",
    },
    "progress-deadline": {
      type: "string",
      valueName: "DURATION",
      description: "a member not done within this fails (default 1h)",
    },
    ...AZ_CREATE_OPTIONS,
  },
  mutating: true,
  prepare: async (args, io) => {
    const problems: string[] = [];
    const choices = readCreateChoices(args, (m) => usageMessage(COMMAND, m));
    if (!choices.ok) return refused(choices.problems.map(formatProblem));
    const { strategyName } = choices.value;
    const file = args.string("file");
    if ((strategyName === undefined) === (file === undefined))
      problems.push(
        usageMessage(
          COMMAND,
          "give the strategy as --strategy NAME or -f FILE (one of them)",
        ),
      );
    const { payload, problems: payloadProblems } = payloadOf(
      args,
      choices.value,
    );
    problems.push(...payloadProblems);
    let progressDeadlineSeconds: number | undefined;
    const deadline = args.string("progress-deadline");
    if (deadline !== undefined) {
      const parsed = parseDuration(deadline);
      if (!parsed.ok)
        problems.push(
          usageMessage(
            COMMAND,
            `--progress-deadline ${formatProblems(parsed.problems)} (got "${deadline}")`,
          ),
        );
      else if (parsed.value < 1000)
        problems.push(
          usageMessage(
            COMMAND,
            `--progress-deadline must be at least 1s (got "${deadline}")`,
          ),
        );
      else if (parsed.value > 0xffffffff * 1000)
        problems.push(
          usageMessage(
            COMMAND,
            `--progress-deadline is too long (got "${deadline}")`,
          ),
        );
      else progressDeadlineSeconds = Math.round(parsed.value / 1000);
    }
    let strategyJson: string | undefined;
    if (file !== undefined && strategyName === undefined) {
      const read = await readStrategyFile(io, file);
      if (read.ok) strategyJson = read.value;
      else problems.push(...read.problems.map(formatProblem));
    }
    if (problems.length > 0 || payload === undefined) return refused(problems);
    const request: wire.CreateUpdateRunRequest = {
      name: args.positional("NAME") ?? "",
      ...compact({ strategyName, strategyJson }),
      payload,
      ...compact({ progressDeadlineSeconds }),
    };
    return prepared({ request, file });
  },
  run: async (ctx, { request, file }) => {
    ctx.problemLines((problems) =>
      problems.map((p) => {
        const inFile =
          file === undefined
            ? undefined
            : stripField(p.path, ["strategyJson", "strategy"]);
        if (
          file !== undefined &&
          (inFile !== undefined || p.path.startsWith("stages"))
        )
          return `${file}: ${formatProblem({ ...p, path: inFile ?? p.path })}`;
        return flagProblem(p);
      }),
    );
    const answer = await ctx.hub.call("createUpdateRun", {
      ...request,
      reason: ctx.reason,
    });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const run = decodeRun(answer.run);
    printLines(ctx.io, [
      `Run ${run.name} created.`,
      ...renderRunStatus(run, {
        ...ctx.render,
        members: false,
        nowMs: ctx.io.now(),
      }),
      ...warningLines(answer.warnings, ctx.render),
    ]);
    return EXIT_OK;
  },
});
