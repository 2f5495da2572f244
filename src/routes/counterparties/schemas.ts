import { z } from "@hono/zod-openapi";
import { COUNTERPARTY_TYPES } from "../../db/schema";
import { choiceFilter, pagingParams, repeatable, textFilter } from "../../lib/filters";
import { timestamp } from "../common";

const internalId = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .openapi({ description: "Your own id for this counterparty; unique per account and type.", example: "SUP-001" });
const name = z.string().trim().min(1).max(255).openapi({ description: "The counterparty's name.", example: "Northwind Paper" });
const type = z.enum(COUNTERPARTY_TYPES).openapi({ description: "`buyer` (pays) or `supplier` (is paid).", example: "supplier" });

export const CounterpartyInput = z.object({ internal_id: internalId, type, name });

export const CounterpartyPatch = z.object({ internal_id: internalId.optional(), name: name.optional() });

export const CounterpartySchema = z
  .object({
    id: z.string().openapi({ description: "The counterparty's id.", example: "cpty_4kQ9x1Vd0aZbT2mN8pLr3s" }),
    internal_id: internalId,
    type,
    name,
    created: timestamp("When it was created."),
    updated: timestamp("When it last changed."),
  })
  .openapi("Counterparty");

export const CounterpartyQuery = z.object({
  ...repeatable("type", choiceFilter(COUNTERPARTY_TYPES, "Only counterparties of these types.")),
  ...repeatable("internal_id", textFilter("Only counterparties with these internal ids.", "SUP-001")),
  ...pagingParams("counterparties"),
});
