/**
 * Durations for people: compact offsets for timeline columns (`+1h02m`) and words for totals
 * (`6h 42m`). Inputs are seconds.
 */

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function parts(totalSeconds: number): {
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
} {
  const s = Math.floor(Math.abs(totalSeconds));
  return {
    days: Math.floor(s / DAY),
    hours: Math.floor((s % DAY) / HOUR),
    minutes: Math.floor((s % HOUR) / MINUTE),
    seconds: s % MINUTE,
  };
}

const two = (n: number): string => String(n).padStart(2, "0");

/**
 * An offset from the start: `+0m`, `+45s`, `+5m`, `+5m05s`, `+1h02m`, `+1d03h00m`. Units below the
 * largest are zero-padded so a column of offsets reads easily; seconds appear only when not zero.
 */
export function formatOffset(seconds: number): string {
  const sign = seconds < 0 ? "-" : "+";
  const { days, hours, minutes, seconds: secs } = parts(seconds);
  const tail = secs === 0 ? "" : `${two(secs)}s`;
  if (days > 0)
    return `${sign}${String(days)}d${two(hours)}h${two(minutes)}m${tail}`;
  if (hours > 0) return `${sign}${String(hours)}h${two(minutes)}m${tail}`;
  if (minutes > 0) return `${sign}${String(minutes)}m${tail}`;
  return secs === 0 ? `${sign}0m` : `${sign}${String(secs)}s`;
}

/**
 * A duration in words: `0s`, `45s`, `12m 30s`, `6h 42m`, `2d 3h`. Seconds are shown only under an
 * hour (below that precision nobody plans a rollout); zero units are left out.
 */
export function formatDuration(seconds: number): string {
  const { days, hours, minutes, seconds: secs } = parts(seconds);
  const words: string[] = [];
  if (days > 0) words.push(`${String(days)}d`);
  if (hours > 0) words.push(`${String(hours)}h`);
  if (minutes > 0) words.push(`${String(minutes)}m`);
  if (secs > 0 && days === 0 && hours === 0) words.push(`${String(secs)}s`);
  return words.length === 0 ? "0s" : words.join(" ");
}

/** Seconds from ISO timestamp `from` to `to`. */
export function secondsBetween(from: string, to: string): number {
  return (Date.parse(to) - Date.parse(from)) / 1000;
}
