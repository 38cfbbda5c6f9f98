/**
 * A chart's values.schema.json compiled with Ajv in strict mode (stricter than Helm's validator:
 * unknown keywords and loose types are refused), and its errors as "path: message" lines so an
 * assertion names the field.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { mergeValues, type ChartFiles } from "./chart-files.js";

/** Compiles a values schema; throws when the schema itself is invalid. */
export function compileValuesSchema(
  schema: Record<string, unknown>,
): ValidateFunction {
  // Union types ("integer or string") are plain draft-07; strict mode only asks to allow them.
  return new Ajv({
    allErrors: true,
    strict: true,
    allowUnionTypes: true,
  }).compile(schema);
}

/** Errors as "path: message", with the unknown key when there is one. */
export function describeErrors(
  errors: ErrorObject[] | null | undefined,
): string[] {
  return (errors ?? []).map((error) => {
    const params = error.params as { additionalProperty?: string };
    const extra = params.additionalProperty ?? "";
    return `${error.instancePath}: ${error.message ?? ""}${extra === "" ? "" : ` "${extra}"`}`;
  });
}

/** A checker of user values: merged over the chart's defaults as Helm does, then validated. */
export function valuesChecker(
  chart: ChartFiles,
): (over: Record<string, unknown>) => string[] {
  const validate = compileValuesSchema(chart.schema);
  return (over) => {
    validate(mergeValues(chart.values, over));
    return describeErrors(validate.errors);
  };
}
