import { z } from "@hono/zod-openapi";
import { COUNTERPARTY_TYPES } from "../../db/schema";
import { choiceFilter, pagingParams, textFilter } from "../../lib/filters";
import { toIso } from "../../lib/time";
import type { Counterparty } from "../../services/counterparties";

const internalId = z.string().trim().min(1).max(255);
const name = z.string().trim().min(1).max(255);

export const CounterpartyInput = z
  .object({ internal_id: internalId, type: z.enum(COUNTERPARTY_TYPES), name })
  .openapi("CounterpartyInput");

export const CounterpartyPatch = z.object({ internal_id: internalId.optional(), name: name.optional() }).openapi("CounterpartyPatch");

export const CounterpartySchema = z
  .object({
    id: z.string().openapi({ example: "cpty_4kQ9x1Vd0aZbT2mN8pLr3s" }),
    internal_id: z.string(),
    type: z.enum(COUNTERPARTY_TYPES),
    name: z.string(),
    created: z.string().datetime(),
    updated: z.string().datetime(),
  })
  .openapi("Counterparty");

export const CounterpartyQuery = z.object({
  type: choiceFilter(COUNTERPARTY_TYPES),
  internal_id: textFilter(),
  ...pagingParams,
});

export const counterpartyView = (row: Counterparty) => ({
  id: row.id,
  internal_id: row.internalId,
  type: row.type,
  name: row.name,
  created: toIso(row.createdAt),
  updated: toIso(row.updatedAt),
});
