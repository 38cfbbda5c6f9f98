/**
 * `flotilla bundle render DIR|NAME --cluster C`: the objects one cluster gets from a bundle
 * directory not applied yet, or from an applied bundle (docs/cli.md#bundle-render). An argument
 * that is an existing directory is a bundle directory; anything else is a bundle's name.
 */
import { basename, resolve } from "node:path";
import type { wire } from "@flotilla/protocol";
import { stringify } from "yaml";
import { EXIT_OK, type CliIo } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
} from "../hub/admin-command.js";
import { printJson } from "../hub/output.js";
import { readBundleDir, type BundleDir } from "./bundle-dir.js";
import { bundleProblemLines, sendableSpec } from "./bundle-request.js";

/** What the argument named: a directory read, or an applied bundle's name. */
type RenderInput =
  | {
      readonly kind: "dir";
      readonly dirPath: string;
      readonly dir: BundleDir;
      readonly cluster: string;
      readonly name: string;
    }
  | {
      readonly kind: "name";
      readonly name: string;
      readonly cluster: string;
      readonly revision: string;
    };

/** Whether `path` is a directory that can be listed. */
async function isDirectory(io: CliIo, path: string): Promise<boolean> {
  try {
    await io.readDir(path);
    return true;
  } catch {
    return false;
  }
}

/** The lines on standard error that say what was rendered, and the notes. */
function summaryLines(answer: wire.RenderBundleResponse__Output): string[] {
  const head = `# bundle ${answer.bundle} revision ${answer.revision} for cluster ${answer.cluster}`;
  if (!answer.targeted)
    return [`${head}: not a target (${answer.notTargeted}); it gets nothing`];
  const customization =
    answer.customizationIndex === undefined
      ? "no target customization"
      : `customization ${answer.customizationName === "" ? "" : `"${answer.customizationName}" `}(targetCustomizations[${String(answer.customizationIndex)}])`;
  const namespaces = [
    answer.defaultNamespace === ""
      ? ""
      : `defaultNamespace ${answer.defaultNamespace}`,
    answer.targetNamespace === "" ? "" : `namespace ${answer.targetNamespace}`,
  ].filter((s) => s !== "");
  return [
    `${head}: ${customization}, content ${answer.contentKey}${namespaces.length > 0 ? `, ${namespaces.join(", ")}` : ""}, ${String(answer.objects.length)} object${answer.objects.length === 1 ? "" : "s"}${answer.helm ? " (rendered by helm)" : ""}`,
    ...answer.notes.map((n) => `# note: ${n}`),
  ];
}

/** The objects as YAML documents, `---` separated. */
export function objectsYaml(
  objects: readonly wire.RenderedObject__Output[],
): string {
  return objects
    .map((o) => `---\n${stringify(JSON.parse(o.objectJson))}`)
    .join("");
}

export const render = adminCommand<RenderInput>({
  name: "bundle render",
  summary:
    "print the objects one cluster gets from a bundle directory or an applied bundle",
  description: [
    "Prints, as YAML documents, exactly the objects CLUSTER gets from the bundle after target",
    "customizations (patches, Helm values), Helm rendering (with the cluster's Kubernetes version)",
    "and the namespace rules; a summary (revision, content, customization) and notes on what the",
    "hub cannot see (valuesFrom, Helm lookup, kinds the agent places by discovery) go to standard",
    "error. DIR|NAME: an existing directory is read as `bundle apply` reads it (nothing is",
    "stored; large files are uploaded as for apply); anything else names an applied bundle",
    "(write ./NAME for a directory that has a bundle's name). -o json prints the hub's answer.",
  ].join("\n"),
  positionals: [
    {
      name: "DIR|NAME",
      description: "a bundle directory, or an applied bundle's name",
    },
  ],
  options: {
    cluster: {
      type: "string",
      valueName: "CLUSTER",
      description: "the cluster whose objects are printed (required)",
    },
    revision: {
      type: "string",
      valueName: "REVISION",
      description:
        "with NAME: the current revision (default) or the one the cluster holds",
    },
  },
  output: {
    type: "string",
    short: "o",
    choices: ["yaml", "json"],
    description: "output format: yaml documents (default), json for machines",
  },
  prepare: async (args, io) => {
    const target = args.positional("DIR|NAME") ?? "";
    const cluster = args.string("cluster");
    if (cluster === undefined)
      return refused([usageMessage("bundle render", "--cluster is required")]);
    const revision = args.string("revision") ?? "";
    if (!(await isDirectory(io, target))) {
      if (target.includes("/") || target.startsWith("."))
        return refused([
          usageMessage(
            "bundle render",
            `${target} is not a directory (a bundle's name has no "/" and does not start with ".")`,
          ),
        ]);
      return prepared({ kind: "name", name: target, cluster, revision });
    }
    if (revision !== "")
      return refused([
        usageMessage(
          "bundle render",
          "--revision is for an applied bundle, not a directory",
        ),
      ]);
    const read = await readBundleDir(io, target);
    if (!read.ok) return read;
    const dir = read.value;
    const name = dir.fleet.name ?? basename(resolve(target));
    return prepared({ kind: "dir", dirPath: target, dir, cluster, name });
  },
  run: async (ctx, input) => {
    let request: wire.RenderBundleRequest;
    if (input.kind === "dir") {
      ctx.problemLines(
        bundleProblemLines(
          input.dirPath,
          input.dir,
          input.dir.fleet.name === undefined ? "directory" : "fleet.yaml",
        ),
      );
      const { bundle } = await sendableSpec(ctx.hub, input.dir, {
        name: input.name,
      });
      request = { cluster: input.cluster, bundle };
    } else {
      request = {
        cluster: input.cluster,
        name: input.name,
        revision: input.revision,
      };
    }
    const answer = await ctx.hub.call("renderBundle", request);
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    ctx.io.stderr(
      summaryLines(answer)
        .map((l) => `${l}\n`)
        .join(""),
    );
    ctx.io.stdout(objectsYaml(answer.objects));
    return EXIT_OK;
  },
});
