/**
 * `promtool check metrics` (Debian's `prometheus` package) on a `/metrics` body: the check the
 * Prometheus project itself applies to exposition text, parse errors and lint (`_total` on
 * counters only, base units...) alike. Tests fail, never skip, when promtool is not installed: a
 * metrics test that silently checks nothing is worse than a red one.
 *
 * Lint findings about metrics we do not name can be accepted by prefix: prom-client's default
 * metrics include gauges called `nodejs_active_handles_total`, which promtool's lint rejects.
 * Parse errors are never accepted.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

/** Where promtool is: `PROMTOOL` if set, else the first `promtool` on `PATH`; undefined when none. */
export function findPromtool(): string | undefined {
  const explicit = process.env["PROMTOOL"];
  if (explicit !== undefined && explicit !== "") return explicit;
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, "promtool");
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Options of {@link promtoolCheckMetrics}. */
export interface PromtoolCheckOptions {
  /** Lint findings about metrics with these name prefixes are accepted (reported in `accepted`). */
  readonly acceptLintOf?: readonly string[];
}

/** What promtool said of a text. */
export interface PromtoolResult {
  /** The text parsed and no finding is left in `problems`. */
  readonly ok: boolean;
  /** Parse errors and lint findings not accepted; empty when ok. */
  readonly problems: readonly string[];
  /** Lint findings accepted by `acceptLintOf`. */
  readonly accepted: readonly string[];
}

/** promtool's exit status for lint findings (1 is a parse or I/O error). */
const LINT_EXIT = 3;

/**
 * Runs `promtool check metrics` on `text`. Throws when promtool is missing, naming the package
 * that provides it.
 */
export function promtoolCheckMetrics(
  text: string,
  options: PromtoolCheckOptions = {},
): PromtoolResult {
  const promtool = findPromtool();
  if (promtool === undefined)
    throw new Error(
      "Cannot check metrics: promtool is not installed (apt-get install prometheus, or set PROMTOOL)",
    );
  const result = spawnSync(promtool, ["check", "metrics"], {
    input: text,
    encoding: "utf8",
    timeout: 20_000,
  });
  if (result.error !== undefined)
    throw new Error(`Cannot run ${promtool}: ${result.error.message}`, {
      cause: result.error,
    });
  const lines = `${result.stdout}${result.stderr}`
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  if (result.status !== 0 && result.status !== LINT_EXIT)
    return {
      ok: false,
      problems:
        lines.length > 0 ? lines : [`exit status ${String(result.status)}`],
      accepted: [],
    };
  const prefixes = options.acceptLintOf ?? [];
  const accepted = lines.filter((line) =>
    prefixes.some((prefix) => line.startsWith(prefix)),
  );
  const problems = lines.filter((line) => !accepted.includes(line));
  return { ok: problems.length === 0, problems, accepted };
}
