/**
 * The manifest YAML splitter lives in @flotilla/node (the agent parses helm's output with it too);
 * this module keeps the hub's import path.
 */
export {
  parseDocuments,
  type DocumentProblem,
  type ManifestDocument,
} from "@flotilla/node";
