/**
 * ANSI styling that is either on or off as a whole, so renderers never check a flag themselves.
 * The caller decides (only on a terminal, and not when NO_COLOR is set).
 */

/** Functions that wrap text in a style, or return it unchanged when colour is off. */
export interface Style {
  readonly bold: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly red: (text: string) => string;
  readonly green: (text: string) => string;
  readonly yellow: (text: string) => string;
  readonly cyan: (text: string) => string;
}

const plain = (text: string): string => text;

function sgr(open: number, close: number): (text: string) => string {
  return (text) =>
    text === ""
      ? text
      : `\u001b[${String(open)}m${text}\u001b[${String(close)}m`;
}

/** A style that colours when `enabled`, and is the identity otherwise. */
export function createStyle(enabled: boolean): Style {
  if (!enabled)
    return {
      bold: plain,
      dim: plain,
      red: plain,
      green: plain,
      yellow: plain,
      cyan: plain,
    };
  return {
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
  };
}

/** Colours a run, stage, group or member state by what it means for the rollout. */
export function styleState(style: Style, state: string): string {
  switch (state) {
    case "Completed":
    case "Succeeded":
    case "Ready":
      return style.green(state);
    case "Failed":
    case "ErrApplied":
    case "NotReady":
    case "Stopped":
      return style.red(state);
    case "NotStarted":
    case "OutOfSync":
    case "Skipped":
      return style.dim(state);
    default:
      return style.yellow(state);
  }
}

/** The number of columns `text` takes on screen (ANSI colour codes take none). */
export function visibleLength(text: string): number {
  // eslint-disable-next-line no-control-regex -- matching the escape character is the point
  return text.replace(/\u001b\[[0-9;]*m/g, "").length;
}
