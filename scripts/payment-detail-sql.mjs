// The SQL that stores each payment's detail on its row (migration 0012), for seeds that insert
// payments after the migrations ran: one source for the migration and the seeds.
import { readFileSync } from "node:fs";

export const paymentDetailSql = () => readFileSync(new URL("../migrations/0012_backfill_payment_detail.sql", import.meta.url), "utf8");
