import { renderOptions } from "@flotilla/node";
import { AGENT_OPTIONS } from "./config/config-options.js";

/** The `flotilla-agent --help` text. */
export const USAGE = `Usage: flotilla-agent [flags]
       flotilla-agent windows show|set|freeze|clear [flags]

Follows each cluster's intent from NATS, makes it so, and reports status to the flotilla hub.
Every flag has an environment fallback (in brackets); a flag wins over its variable.

${renderOptions(AGENT_OPTIONS, { column: 28, short: true, overflowGap: 2, defaultsAndEnv: false }).join("\n")}

Commands:
  flotilla-agent windows show|set|freeze|clear ...  the owner's maintenance windows in the
                             cluster's ConfigMap (also a kubectl plugin); windows --help for more

Exit codes: 0 stopped by SIGTERM/SIGINT, 1 failed, 2 bad configuration.
See docs/agent.md.
`;
