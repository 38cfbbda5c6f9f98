import { describe, expect, it } from "vitest";
import { renderTree } from "../src/render/tree.js";

describe("renderTree", () => {
  it("draws branches, continues the line past non-last nodes and indents bodies under leaves", () => {
    const lines = renderTree(
      [
        {
          label: "stage a",
          children: [{ label: "group a1", body: () => ["c-1"] }],
        },
        {
          label: "stage b",
          children: [
            { label: "group b1", body: () => ["c-2"] },
            { label: "group b2", body: () => ["c-3"] },
          ],
        },
      ],
      80,
    );
    expect(lines).toEqual([
      "├─ stage a",
      "│  └─ group a1",
      "│     c-1",
      "└─ stage b",
      "   ├─ group b1",
      "   │  c-2",
      "   └─ group b2",
      "      c-3",
    ]);
  });

  it("gives bodies the width left after the indentation", () => {
    const widths: number[] = [];
    renderTree(
      [
        {
          label: "a",
          children: [{ label: "b", body: (w) => (widths.push(w), []) }],
        },
      ],
      80,
    );
    expect(widths).toEqual([80 - "   ".length - "   ".length]);
  });
});
