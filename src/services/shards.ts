import { count, eq, isNull } from "drizzle-orm";
import { createDb, runNamedBatch, type Db } from "../db/client";
import { accounts, shards } from "../db/schema";
import { boundShards } from "../db/shards";
import type { Env } from "../env";
import { AppError, invalidField, notFound } from "../errors";

/** A shard as the admin API shows it (docs/interface.md, "Tenancy and authentication"). */
export interface ShardState {
  name: string;
  /** Accounts placed on it (erased ones no longer count). */
  accounts: number;
  /** The database's size as D1 reports it; null when the configuration lacks its binding. */
  bytes: number | null;
  open: boolean;
}

/**
 * Every shard the directory knows, with its accounts and size. A binding seen for the first time is
 * recorded, open; a shard the directory knows whose binding is gone is still listed (its accounts
 * answer 500 until it is restored), with no size.
 */
export async function listShards(directory: Db, env: Env, now = Date.now()): Promise<ShardState[]> {
  const bound = boundShards(env);
  const known = directory.select().from(shards).orderBy(shards.name);
  const placed = directory.select({ shard: accounts.shard, n: count() }).from(accounts).where(isNull(accounts.erasedAt)).groupBy(accounts.shard);
  const record = recordBound(directory, env, now);
  const { rows, counts } = await runNamedBatch(directory, { recorded: record ? [record] : [], rows: known, counts: placed });
  const placedOn = new Map(counts.map((row) => [row.shard, row.n]));
  return Promise.all(
    rows.map(async (row) => {
      const binding = bound.get(row.name);
      return { name: row.name, accounts: placedOn.get(row.name) ?? 0, bytes: binding ? await databaseBytes(binding) : null, open: row.open };
    }),
  );
}

/** Records each configured shard the directory does not know yet, open; null when none is configured. */
function recordBound(directory: Db, env: Env, now: number) {
  const names = [...boundShards(env).keys()];
  if (names.length === 0) return null;
  return directory
    .insert(shards)
    .values(names.map((name) => ({ name, open: true, createdAt: now })))
    .onConflictDoNothing();
}

/** The database's size as D1 reports it with every result (`meta.size_after`). */
async function databaseBytes(binding: D1Database): Promise<number> {
  const result = await binding.prepare("select 1").run();
  return result.meta.size_after ?? 0;
}

/**
 * The shard a new account goes to: the one named, if it is configured and open; else the open
 * configured shard with the fewest bytes (ties by name).
 */
export async function placeAccount(directory: Db, env: Env, named: string | undefined): Promise<string> {
  const placed = chooseShard(await listShards(directory, env), named);
  if (placed.shard !== undefined) return placed.shard;
  if (named === undefined) throw new AppError("conflict", placed.refusal);
  throw invalidField("shard", placed.refusal);
}

/** Placement's decision, from the shards as listed (a shard with no size is not configured). */
export function chooseShard(shards: readonly ShardState[], named: string | undefined): { shard: string } | { shard?: undefined; refusal: string } {
  if (named !== undefined) {
    const shard = shards.find((row) => row.name === named && row.bytes !== null);
    if (!shard) return { refusal: `No shard "${named}" is configured.` };
    if (!shard.open) return { refusal: `Shard "${named}" is closed to new accounts.` };
    return { shard: shard.name };
  }
  const open = shards.filter((row) => row.open && row.bytes !== null).sort((a, b) => a.bytes! - b.bytes! || (a.name < b.name ? -1 : 1));
  return open[0] ? { shard: open[0].name } : { refusal: "No shard is open to new accounts." };
}

/** Opens or closes a shard to new accounts; its accounts keep working either way. */
export async function setShardOpen(directory: Db, env: Env, name: string, open: boolean): Promise<ShardState> {
  // A binding seen for the first time is recorded in the same batch, so it can be closed at once.
  const record = recordBound(directory, env, Date.now());
  const update = directory.update(shards).set({ open }).where(eq(shards.name, name)).returning({ name: shards.name });
  const { changed } = await runNamedBatch(directory, { recorded: record ? [record] : [], changed: update });
  if (changed.length === 0) throw notFound();
  return (await listShards(directory, env)).find((row) => row.name === name)!;
}

/**
 * A walk over every configured shard in name order, one shard a call (admin tasks that go on with
 * `?after=`): `after` is `<shard>/<position in it>` as the last call returned (the position empty
 * at a shard's start), and the report's `next_after` says where to go on, null at the end.
 */
export async function walkShards<R extends { next_after: string | null }>(
  env: Env,
  after: string | null,
  step: (db: Db, after: string | null) => Promise<R>,
): Promise<R> {
  const bound = boundShards(env);
  const names = [...bound.keys()];
  const slash = after?.indexOf("/") ?? -1;
  const shard = after === null ? names[0] : after.slice(0, slash);
  const binding = shard === undefined ? undefined : bound.get(shard);
  if (!binding || (after !== null && slash < 0)) {
    if (after === null) throw new AppError("not_configured", "Service is not configured.");
    throw invalidField("after", "Not a position an earlier call returned.");
  }
  const position = after === null || after.slice(slash + 1) === "" ? null : after.slice(slash + 1);
  const report = await step(createDb(binding), position);
  const next = names[names.indexOf(shard!) + 1];
  return { ...report, next_after: report.next_after !== null ? `${shard}/${report.next_after}` : next !== undefined ? `${next}/` : null };
}
