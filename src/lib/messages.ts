import type { z } from "@hono/zod-openapi";

/**
 * Zod issues worded as Django REST framework words them, so that every 400 reads the same.
 * Installed once with `z.config({ customError })` in app.ts.
 */
export const drfMessage = (issue: z.core.$ZodRawIssue): string | undefined => {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "This field is required.";
      if (issue.input === null) return "This field may not be null.";
      if (issue.expected === "number" && isInteger(issue.inst)) return TYPE_MESSAGES.int;
      return TYPE_MESSAGES[issue.expected] ?? "Invalid value.";
    case "too_small":
      if (issue.origin === "string") {
        return issue.minimum === 1 ? "This field may not be blank." : `Ensure this field has at least ${issue.minimum} characters.`;
      }
      if (issue.origin === "array") return issue.minimum === 1 ? "This list may not be empty." : `Ensure this field has at least ${issue.minimum} elements.`;
      return `Ensure this value is greater than or equal to ${issue.inclusive ? issue.minimum : Number(issue.minimum) + 1}.`;
    case "too_big":
      if (issue.origin === "string") return `Ensure this field has no more than ${issue.maximum} characters.`;
      if (issue.origin === "array") return `Ensure this field has no more than ${issue.maximum} elements.`;
      return `Ensure this value is less than or equal to ${issue.maximum}.`;
    case "invalid_value":
      if (issue.input === undefined) return "This field is required.";
      if (issue.input === null) return "This field may not be null.";
      return `"${String(issue.input)}" is not a valid choice.`;
    case "invalid_format":
      return "Enter a valid value.";
    default:
      return undefined;
  }
};

/** `z.int()` reports a wrong type as "expected number"; its format tells the two apart. */
function isInteger(schema: unknown): boolean {
  const format = (schema as { _zod?: { def?: { format?: string } } } | undefined)?._zod?.def?.format;
  return typeof format === "string" && format.includes("int");
}

const TYPE_MESSAGES: Record<string, string> = {
  string: "Not a valid string.",
  number: "A valid number is required.",
  int: "A valid integer is required.",
  boolean: "Must be a valid boolean.",
  array: "Expected a list of items.",
  object: "Invalid data. Expected a dictionary.",
};

/**
 * Turns Zod issues into DRF's `{field: [messages]}`; whole-body issues go to `non_field_errors`.
 * A value of the wrong type gets that one message, as in DRF (Zod may add a length check after it).
 */
export function fieldErrors(issues: readonly z.core.$ZodIssue[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const wrongType = new Set<string>();
  for (const issue of issues) {
    const key = issue.path.length === 0 ? "non_field_errors" : String(issue.path[0]);
    if (wrongType.has(key)) continue;
    if (issue.code === "invalid_type" && issue.path.length === 1) {
      wrongType.add(key);
      out[key] = [issue.message];
      continue;
    }
    (out[key] ??= []).push(issue.message);
  }
  return out;
}

/** DRF's words for a body that is valid JSON but not an object. */
export function notAnObject(value: unknown): string {
  const type = Array.isArray(value)
    ? "list"
    : value === null
      ? "NoneType"
      : typeof value === "string"
        ? "str"
        : typeof value === "number"
          ? Number.isInteger(value)
            ? "int"
            : "float"
          : typeof value === "boolean"
            ? "bool"
            : typeof value;
  return `Invalid data. Expected a dictionary, but got ${type}.`;
}
