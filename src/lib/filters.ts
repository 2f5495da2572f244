import { z } from "@hono/zod-openapi";
import { parseInstant } from "./time";

/** Hono hands a repeated query parameter over as an array and a single one as a string. */
const asList = (value: unknown) => (value === undefined || Array.isArray(value) ? value : [value]);
const lastOf = (value: unknown) => (Array.isArray(value) ? value.at(-1) : value);

export const MAX_FILTER_VALUES = 50;

/** A repeatable filter over fixed choices; values are OR-ed. */
export function choiceFilter<const T extends readonly [string, ...string[]]>(choices: T) {
  const choice = z.string().refine((value): value is T[number] => (choices as readonly string[]).includes(value), {
    error: (issue) => `Select a valid choice. ${String(issue.input)} is not one of the available choices.`,
  });
  return z
    .preprocess(asList, z.array(choice).max(MAX_FILTER_VALUES))
    .optional()
    .openapi({ type: "array", items: { type: "string", enum: [...choices] }, description: "Repeatable; values are OR-ed." });
}

/** A repeatable filter over free text (ids, internal ids, invoice numbers); values are OR-ed. */
export function textFilter() {
  return z
    .preprocess(asList, z.array(z.string().max(255)).max(MAX_FILTER_VALUES))
    .optional()
    .openapi({ type: "array", items: { type: "string" }, description: "Repeatable; values are OR-ed." });
}

/** A date/time bound: ISO 8601 with or without zone or fraction, or a bare date. */
export function timeFilter() {
  return z
    .preprocess(
      lastOf,
      z.string().transform((text, ctx) => {
        const instant = parseInstant(text);
        if (!instant) {
          ctx.addIssue({ code: "custom", message: "Enter a valid date/time." });
          return z.NEVER;
        }
        return instant;
      }),
    )
    .optional()
    .openapi({ type: "string", format: "date-time", description: "ISO 8601; no zone means UTC; a bare date is midnight UTC." });
}

/** One of fixed choices, not repeatable (the last value counts, as in Django). */
export function singleChoice<const T extends readonly [string, ...string[]]>(choices: T) {
  const choice = z.string().refine((value): value is T[number] => (choices as readonly string[]).includes(value), {
    error: (issue) => `Select a valid choice. ${String(issue.input)} is not one of the available choices.`,
  });
  return z.preprocess(lastOf, choice).optional().openapi({ type: "string", enum: [...choices] });
}

/** The paging parameters, documented here and read by lib/pagination. */
export const pagingParams = {
  page: z.preprocess(lastOf, z.string()).optional().openapi({ type: "integer", minimum: 1, description: "1-based page number." }),
  page_size: z.preprocess(lastOf, z.string()).optional().openapi({ type: "integer", minimum: 1, maximum: 1000, default: 100 }),
  cursor: z.preprocess(lastOf, z.string()).optional().openapi({ type: "string", description: "Opaque; found in next/previous links." }),
};

export const createdFilters = {
  created__gt: timeFilter(),
  created__gte: timeFilter(),
  created__lt: timeFilter(),
  created__lte: timeFilter(),
};
