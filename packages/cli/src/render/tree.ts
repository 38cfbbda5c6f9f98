/**
 * A box-drawing tree (├─ └─ │) whose nodes may carry body lines laid out in the width that is left
 * after the tree's indentation.
 */

/** One node: a label, optional body lines under it, and children. */
export interface TreeNode {
  /** One line, or lines laid out in the width left after the branch (later lines align under the first). */
  readonly label: string | ((width: number) => readonly string[]);
  /** Produces the body for the width left after indentation (e.g. a wrapped list of clusters). */
  readonly body?: (width: number) => readonly string[];
  readonly children?: readonly TreeNode[];
}

const BRANCH = "├─ ";
const LAST_BRANCH = "└─ ";
const PIPE = "│  ";
const SPACE = "   ";

/** Renders the nodes as lines; `width` is the total width the body functions may fill. */
export function renderTree(
  nodes: readonly TreeNode[],
  width: number,
): string[] {
  const lines: string[] = [];
  const walk = (list: readonly TreeNode[], prefix: string): void => {
    list.forEach((node, index) => {
      const last = index === list.length - 1;
      const branch = prefix + (last ? LAST_BRANCH : BRANCH);
      const childPrefix = prefix + (last ? SPACE : PIPE);
      const children = node.children ?? [];
      // A body (or a label's later lines) above children keeps the line to them unbroken.
      const bodyPrefix = children.length > 0 ? childPrefix + PIPE : childPrefix;
      const label =
        typeof node.label === "string"
          ? [node.label]
          : node.label(width - branch.length);
      label.forEach((line, i) => {
        if (i === 0) lines.push(branch + line);
        // Later label lines sit where the children's branches start: draw the line to them there.
        else if (children.length > 0 && line.startsWith(" "))
          lines.push(`${childPrefix}│${line.slice(1)}`);
        else lines.push(childPrefix + line);
      });
      for (const line of node.body?.(width - bodyPrefix.length) ?? [])
        lines.push(bodyPrefix + line);
      walk(children, childPrefix);
    });
  };
  walk(nodes, "");
  return lines;
}
