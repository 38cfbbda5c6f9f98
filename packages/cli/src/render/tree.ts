/**
 * A box-drawing tree (├─ └─ │) whose nodes may carry body lines laid out in the width that is left
 * after the tree's indentation.
 */

/** One node: a label line, optional body lines under it, and children. */
export interface TreeNode {
  readonly label: string;
  /** Produces the body for the width left after indentation (e.g. a wrapped list of clusters). */
  readonly body?: (width: number) => readonly string[];
  readonly children?: readonly TreeNode[];
}

const BRANCH = "├─ ";
const LAST_BRANCH = "└─ ";
const PIPE = "│  ";
const SPACE = "   ";

/** Renders the nodes as lines; `width` is the total width the body functions may fill. */
export function renderTree(nodes: readonly TreeNode[], width: number): string[] {
  const lines: string[] = [];
  const walk = (list: readonly TreeNode[], prefix: string): void => {
    list.forEach((node, index) => {
      const last = index === list.length - 1;
      lines.push(prefix + (last ? LAST_BRANCH : BRANCH) + node.label);
      const childPrefix = prefix + (last ? SPACE : PIPE);
      const children = node.children ?? [];
      // A body above children keeps the line to them unbroken.
      const bodyPrefix = children.length > 0 ? childPrefix + PIPE : childPrefix;
      for (const line of node.body?.(width - bodyPrefix.length) ?? []) lines.push(bodyPrefix + line);
      walk(children, childPrefix);
    });
  };
  walk(nodes, "");
  return lines;
}
