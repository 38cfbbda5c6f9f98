import { describe, expect, it } from "vitest";
import type { ParsedArgs } from "../src/commands/command.js";
import { readConnectionLayers } from "../src/hub/connection-options.js";

function parsed(
  strings: Record<string, string>,
  flags: readonly string[] = [],
): ParsedArgs {
  return {
    string: (name) => strings[name],
    strings: (name) => (strings[name] === undefined ? [] : [strings[name]]),
    flag: (name) => flags.includes(name),
    positional: () => undefined,
    positionals: () => [],
  };
}

describe("hub connection options", () => {
  it("keeps the flags and the environment apart", () => {
    const layers = readConnectionLayers(
      parsed({ hub: "a:1", "tls-cert": "c.pem" }, ["insecure-plaintext"]),
      {
        FLOTILLA_HUB: "b:2",
        FLOTILLA_TLS_KEY: "k.pem",
        FLOTILLA_INSECURE_PLAINTEXT: "Yes",
        FLOTILLA_CONTEXT: "dev",
      },
    );
    expect(layers.flags).toEqual({
      hub: "a:1",
      "tls-cert": "c.pem",
      "insecure-plaintext": "true",
    });
    expect(layers.env).toEqual({
      hub: "b:2",
      "tls-key": "k.pem",
      "insecure-plaintext": "Yes",
      context: "dev",
    });
  });

  it("takes an empty flag value as given and an empty variable as unset", () => {
    const layers = readConnectionLayers(parsed({ context: "" }), {
      FLOTILLA_CONTEXT: "",
      FLOTILLA_TOKEN: "",
      FLOTILLA_ACTOR: "",
    });
    expect(layers.flags).toEqual({ context: "" });
    expect(layers.env).toEqual({});
  });

  it("reads the token in clear from its variable, beside the table", () => {
    const layers = readConnectionLayers(parsed({}), {
      FLOTILLA_TOKEN: "t0k3n",
      FLOTILLA_TOKEN_FILE: "/run/token",
    });
    expect(layers.env).toEqual({ token: "t0k3n", "token-file": "/run/token" });
  });

  it("leaves --actor to a command that gives it another meaning", () => {
    const args = parsed({ actor: "alice", timeout: "5s" });
    const env = { FLOTILLA_ACTOR: "bob" };
    expect(readConnectionLayers(args, env).flags).toEqual({
      actor: "alice",
      timeout: "5s",
    });
    const audit = readConnectionLayers(args, env, { actorFlag: false });
    expect(audit.flags).toEqual({ timeout: "5s" });
    expect(audit.env).toEqual({ actor: "bob" });
  });
});
