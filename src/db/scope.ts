import { eq, type Column, type SQL } from "drizzle-orm";

/**
 * The tenant filter. Every query on an account-owned table goes through this helper, so a query
 * that forgets its tenant stands out in review.
 */
export function inAccount(table: { accountId: Column }, accountId: string): SQL {
  return eq(table.accountId, accountId);
}
