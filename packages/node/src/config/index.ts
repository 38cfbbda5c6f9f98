/** The argv+env option loader shared by the hub, the agent and the CLI. */
export { parseByteSize } from "./byte-size.js";
export { closestFlag } from "./closest-flag.js";
export { unreadableFile } from "./files.js";
export { option, spelled } from "./option-table.js";
export type {
  OptionSource,
  OptionSpec,
  OptionTable,
  OptionValues,
  ValueParser,
} from "./option-table.js";
export { gatherOptions, readOptions } from "./read-options.js";
export type { GatheredOptions, ReadSettings } from "./read-options.js";
export { renderOptions } from "./render-options.js";
export type { RenderSettings } from "./render-options.js";
export {
  byteSize,
  duration,
  fileContent,
  list,
  oneOf,
  onOff,
  readableFile,
  refuse,
  SWITCH_WORDS,
  text,
  wholeNumber,
} from "./values.js";
export type { SwitchWords } from "./values.js";
