import { z } from "@hono/zod-openapi";
import { parseInstant } from "./time";

/** Hono hands a repeated query parameter over as an array and a single one as a string. */
const asList = (value: unknown) => (value === undefined || Array.isArray(value) ? value : [value]);
const lastOf = (value: unknown) => (Array.isArray(value) ? value.at(-1) : value);

export const MAX_FILTER_VALUES = 50;

/** A repeatable filter over fixed choices; values are OR-ed. */
export function choiceFilter<const T extends readonly [string, ...string[]]>(choices: T, description = "Only these values.") {
  const choice = z.string().refine((value): value is T[number] => (choices as readonly string[]).includes(value), {
    error: (issue) => `Select a valid choice. ${String(issue.input)} is not one of the available choices.`,
  });
  return z
    .preprocess(asList, z.array(choice).max(MAX_FILTER_VALUES))
    .optional()
    .openapi({ type: "array", items: { type: "string", enum: [...choices] }, description: `${description} Repeatable; values are OR-ed.`, example: [choices[0]] });
}

/** A repeatable filter over free text (ids, internal ids, invoice numbers); values are OR-ed. */
export function textFilter(description: string, example: string) {
  return z
    .preprocess(asList, z.array(z.string().max(255)).max(MAX_FILTER_VALUES))
    .optional()
    .openapi({ type: "array", items: { type: "string" }, description: `${description} Repeatable (up to ${MAX_FILTER_VALUES}); values are OR-ed.`, example: [example] });
}

/** A date/time bound: ISO 8601 with or without zone or fraction, or a bare date. */
export function timeFilter(description: string) {
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
    .openapi({
      type: "string",
      format: "date-time",
      description: `${description} ISO 8601 with or without a zone (none means UTC) and with any number of fractional digits, or a bare date (midnight UTC); compared exactly.`,
      example: "2026-11-02T09:12:00Z",
    });
}

/** One of fixed choices, not repeatable (the last value counts, as in Django). */
export function singleChoice<const T extends readonly [string, ...string[]]>(choices: T, description: string) {
  const choice = z.string().refine((value): value is T[number] => (choices as readonly string[]).includes(value), {
    error: (issue) => `Select a valid choice. ${String(issue.input)} is not one of the available choices.`,
  });
  return z.preprocess(lastOf, choice).optional().openapi({ type: "string", enum: [...choices], description, example: choices[0] });
}

/** The paging parameters, documented here and read by lib/pagination. */
export const pagingParams = {
  page: z.preprocess(lastOf, z.string()).optional().openapi({
    type: "integer",
    minimum: 1,
    description: "1-based page number, for direct access; following `next` links costs the same at any depth.",
    example: 2,
  }),
  page_size: z.preprocess(lastOf, z.string()).optional().openapi({
    type: "integer",
    minimum: 1,
    maximum: 1000,
    default: 100,
    description: "Rows per page; larger values are clamped to 1000, invalid ones read as 100.",
    example: 100,
  }),
  cursor: z.preprocess(lastOf, z.string()).optional().openapi({ type: "string", description: "Opaque; carried by `next` and `previous` links." }),
};

/** `<field>__gt`, `__gte`, `__lt` and `__lte` bounds on one timestamp field. */
export function timeRange<const F extends string>(field: F) {
  return {
    [`${field}__gt`]: timeFilter(`Only rows whose \`${field}\` is after this instant.`),
    [`${field}__gte`]: timeFilter(`Only rows whose \`${field}\` is at or after this instant.`),
    [`${field}__lt`]: timeFilter(`Only rows whose \`${field}\` is before this instant.`),
    [`${field}__lte`]: timeFilter(`Only rows whose \`${field}\` is at or before this instant.`),
  } as Record<`${F}__${"gt" | "gte" | "lt" | "lte"}`, ReturnType<typeof timeFilter>>;
}

export const createdFilters = timeRange("created");
