/** The agent's version, sent in Hello; a test keeps it equal to package.json's. */
export const AGENT_VERSION = "0.1.0";
