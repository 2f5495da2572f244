const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const ID_LENGTH = 22; // 22 x 6 bits = 132 random bits

export type IdPrefix = "acct" | "cpty" | "inv" | "pmt" | "pev" | "rpl";

/** A prefixed id such as `pmt_3fZ…`: the prefix, an underscore and 22 random URL-safe characters. */
export function newId(prefix: IdPrefix): string {
  const bytes = crypto.getRandomValues(new Uint8Array(ID_LENGTH));
  let out = "";
  for (const byte of bytes) out += ALPHABET[byte & 63];
  return `${prefix}_${out}`;
}

/** A random opaque token, used to fence concurrent writes to one row. */
export function newToken(): string {
  return newId("pev").slice(4);
}
