/** API paths the console calls, built so that nothing from the address can reach another path. */

/**
 * An API path with values put into it as single path segments: `apiPath\`/v1/webhooks/${id}/\``.
 * Each value is percent-encoded, so an id taken from the address (after `#`) cannot add segments
 * or a query, and `.` or `..` (a dot segment however encoded) is refused, so it cannot climb to
 * another API path. Pure.
 */
export function apiPath(parts: TemplateStringsArray, ...values: string[]): string {
  return parts.reduce((out, part, i) => {
    if (i === 0) return part;
    const value = values[i - 1]!;
    if (value === "" || /^(\.|%2e){1,2}$/i.test(value)) throw new Error("Not found.");
    return `${out}${encodeURIComponent(value)}${part}`;
  });
}
