import { pageBounds, type ListName } from "./list-bounds";
import { z } from "@hono/zod-openapi";
import { parseInstant } from "./time";

/**
 * Query values as Django and django-filter read them. Hono hands a repeated parameter over as an
 * array and a single one as a string. An empty value is no value: the filter is left out, as
 * django-filter leaves out a filter whose value is empty.
 */
const asList = (value: unknown): unknown[] | undefined => (value === undefined ? undefined : Array.isArray(value) ? value : [value]);
const lastOf = (value: unknown) => (Array.isArray(value) ? value.at(-1) : value);
const present = (values: string[]) => {
  const kept = [...new Set(values.filter((value) => value !== ""))];
  return kept.length > 0 ? kept : undefined;
};
/** Django's CharField strips surrounding white space. */
const stripped = (value: unknown) => (typeof value === "string" ? value.trim() : value);
const strings = (values: unknown[] | undefined) => values?.map((value) => (typeof value === "string" ? value : String(value)));

export const MAX_FILTER_VALUES = 50;

/**
 * A repeatable filter's schema in the OpenAPI document: one value (`?type=supplier`) or a list
 * (`?type=buyer&type=supplier`), so that a generated client takes either, as the query does.
 */
function oneOrMany(item: { type: "string"; enum?: string[] }) {
  return { [ONE_OR_MANY]: true, anyOf: [item, { type: "array" as const, items: item, maxItems: MAX_FILTER_VALUES }] };
}

const ONE_OR_MANY = "x-one-or-many";

/**
 * The document with each repeatable filter's schema as `oneOrMany` says: the generator merges it
 * into the array schema it makes of the validator, which would refuse a single value; here the
 * array's own keys go, the `anyOf` stays.
 */
export function withOneOrMany<T>(document: T): T {
  for (const operations of Object.values(
    (document as { paths?: Record<string, Record<string, { parameters?: { schema?: Record<string, unknown> }[] }>> }).paths ?? {},
  )) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) {
        const schema = parameter.schema;
        if (!schema?.[ONE_OR_MANY]) continue;
        const { anyOf, description, example } = schema;
        parameter.schema = { anyOf, description, example };
      }
    }
  }
  return document;
}

const NO_NUL = "Null characters are not allowed.";

function choiceOf<const T extends readonly [string, ...string[]]>(choices: T) {
  return z.string().refine((value): value is T[number] => (choices as readonly string[]).includes(value), {
    error: (issue) => `Select a valid choice. ${String(issue.input)} is not one of the available choices.`,
  });
}

/**
 * A repeatable filter over fixed choices; values are OR-ed, a value given twice counts once, and
 * empty values are left out. Choices are matched exactly (no stripping), as Django's ChoiceField does.
 */
export function choiceFilter<const T extends readonly [string, ...string[]]>(choices: T, description = "Only these values.") {
  return z
    .preprocess((value) => present(strings(asList(value)) ?? []), z.array(choiceOf(choices)).max(MAX_FILTER_VALUES).optional())
    .optional()
    .openapi({ ...oneOrMany({ type: "string", enum: [...choices] }), description: `${description} Repeatable; values are OR-ed.`, example: [choices[0]] });
}

/**
 * A repeatable filter over free text (ids, internal ids, invoice numbers); values are OR-ed. Each
 * value is stripped of surrounding white space, an empty one is left out, a value given twice
 * counts once, and a NUL character is refused, as django-filter's CharFilter does.
 */
export function textFilter(description: string, example: string) {
  return z
    .preprocess(
      (value) => present((strings(asList(value)) ?? []).map((text) => text.trim())),
      z
        .array(
          z
            .string()
            .max(255)
            .refine((text) => !text.includes("\u0000"), NO_NUL),
        )
        .max(MAX_FILTER_VALUES)
        .optional(),
    )
    .optional()
    .openapi({
      ...oneOrMany({ type: "string" }),
      description: `${description} Repeatable (up to ${MAX_FILTER_VALUES}); values are OR-ed; surrounding spaces are ignored.`,
      example: [example],
    });
}

/**
 * The comma-separated form of a repeatable filter, as django-filter's `__in` lookups read it:
 * `status__in=pending,settled` is `status=pending&status=settled`. Routes merge it with `withInLookups`.
 */
export function inLookup(of: string, values: z.ZodTypeAny) {
  return z
    .preprocess(lastOf, z.string().optional())
    .transform((text, ctx) => {
      if (text === undefined || text === "") return undefined;
      const parsed = values.safeParse(text.split(","));
      if (parsed.success) return parsed.data as string[] | undefined;
      for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", message: issue.message });
      return z.NEVER;
    })
    .optional()
    .openapi({ type: "string", description: `Comma-separated values, the same as repeating \`${of}\`.`, example: "a,b" });
}

/** `<name>` and `<name>__in` of a repeatable filter, for a query's shape. */
export function repeatable<const N extends string, S extends z.ZodTypeAny>(name: N, filter: S) {
  return { [name]: filter, [`${name}__in`]: inLookup(name, filter) } as Record<N | `${N}__in`, S>;
}

/** A query with each `<name>__in` folded into `<name>`: the union of both, each value once. */
export function withInLookups<Q extends Record<string, unknown>>(query: Q): Q {
  const out: Record<string, unknown> = { ...query };
  for (const key of Object.keys(query)) {
    if (!key.endsWith("__in")) continue;
    const name = key.slice(0, -4);
    const merged = [...((out[name] as string[] | undefined) ?? []), ...((query[key] as string[] | undefined) ?? [])];
    out[name] = merged.length > 0 ? [...new Set(merged)] : undefined;
    delete out[key];
  }
  return out as Q;
}

/**
 * A date/time bound: ISO 8601 with or without zone or fraction, or a bare date. The last value of
 * a repeated one counts, and an empty one is left out, as Django reads a single value.
 */
export function timeFilter(description: string) {
  return z
    .preprocess(
      (value) => {
        const text = stripped(lastOf(value));
        return text === "" ? undefined : text;
      },
      z
        .string()
        .transform((text, ctx) => {
          const instant = parseInstant(text);
          if (!instant) {
            ctx.addIssue({ code: "custom", message: "Enter a valid date/time." });
            return z.NEVER;
          }
          return instant;
        })
        .optional(),
    )
    .optional()
    .openapi({
      type: "string",
      format: "date-time",
      description: `${description} ISO 8601 with or without a zone (none means UTC) and with any number of fractional digits, or a bare date (midnight UTC); compared exactly.`,
      example: "2026-11-02T09:12:00Z",
    });
}

/** One of fixed choices, not repeatable (the last value counts, as in Django; an empty one is none). */
export function singleChoice<const T extends readonly [string, ...string[]]>(choices: T, description: string) {
  return z
    .preprocess((value) => {
      const text = lastOf(value);
      return text === "" ? undefined : text;
    }, choiceOf(choices).optional())
    .optional()
    .openapi({ type: "string", enum: [...choices], description, example: choices[0] });
}

/** The paging parameters, documented here and read by lib/pagination. */
/** The paging parameters of a list, with its bounds (lib/list-bounds.ts). */
export const pagingParams = (list: ListName) => {
  const { max, default: fallback } = pageBounds(list);
  return {
    page: z.preprocess(lastOf, z.string()).optional().openapi({
      type: "integer",
      minimum: 1,
      description: "1-based page number, for direct access; following `next` links costs the same at any depth.",
      example: 2,
    }),
    page_size: z
      .preprocess(lastOf, z.string())
      .optional()
      .openapi({
        type: "integer",
        minimum: 1,
        maximum: max,
        default: fallback,
        description: `Rows per page; larger values are clamped to ${max}, invalid ones read as ${fallback}.`,
        example: fallback,
      }),
    cursor: z.preprocess(lastOf, z.string()).optional().openapi({ type: "string", description: "Opaque; carried by `next` and `previous` links." }),
  };
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
