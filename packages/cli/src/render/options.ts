import type { Style } from "./style.js";

/** How to lay out human output. */
export interface RenderOptions {
  /** Columns to fill (the terminal's, or 80 when not a terminal). */
  readonly width: number;
  readonly style: Style;
  /** Show every cluster instead of "… and N more". */
  readonly all: boolean;
}
