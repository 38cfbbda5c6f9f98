/**
 * Sizes in bytes as flags and Helm values spell them: a whole number with an optional binary unit,
 * `1073741824`, `512MiB`, `1GiB` (Kubernetes' `512Mi`, `1Gi` too). Decimal units (`MB`, `GB`) are
 * refused rather than guessed: NATS and Kubernetes disagree on what they mean.
 */

const UNITS: Readonly<Record<string, number>> = {
  "": 1,
  B: 1,
  Ki: 1024,
  KiB: 1024,
  Mi: 1024 ** 2,
  MiB: 1024 ** 2,
  Gi: 1024 ** 3,
  GiB: 1024 ** 3,
  Ti: 1024 ** 4,
  TiB: 1024 ** 4,
};

const SIZE = /^(\d{1,16})\s*([A-Za-z]*)$/;

/** The number of bytes `text` spells, or undefined when it is not a size (or not a safe integer). */
export function parseByteSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim());
  if (match === null) return undefined;
  const unit = UNITS[match[2] ?? ""];
  if (unit === undefined) return undefined;
  const bytes = Number(match[1]) * unit;
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
