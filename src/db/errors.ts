/** True when D1 rejected a statement for a UNIQUE index; drizzle wraps D1's error as `cause`. */
export function isUniqueViolation(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 4; depth++) {
    if (current.message.includes("UNIQUE constraint failed")) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
