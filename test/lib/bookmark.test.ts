import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { issueBookmark, parseBookmark, readBookmark, sessionConstraint, type Bookmark } from "../../src/lib/bookmark";

describe("sessionConstraint: where a request's shard session starts", () => {
  const onA: Bookmark = { shard: "A", d1: "00000001-00000002-00000003-0000000000000000000000000000abcd" };
  const onB: Bookmark = { shard: "B", d1: "00000009-00000002-00000003-0000000000000000000000000000abcd" };
  const list = "/v1/invoices/";
  const cases: [string, string, string, Bookmark | "unverifiable" | null, string][] = [
    ["a read with no bookmark: any replica", "GET", list, null, "first-unconstrained"],
    ["a HEAD with no bookmark", "HEAD", list, null, "first-unconstrained"],
    ["a read with this shard's bookmark: a replica at least that new", "GET", list, onA, onA.d1],
    ["a read with the bookmark of the shard the account left: the primary", "GET", list, onB, "first-primary"],
    ["a read with a bookmark no key can check: the primary", "GET", list, "unverifiable", "first-primary"],
    ["a write: the primary", "POST", list, null, "first-primary"],
    ["a write with a bookmark: the primary all the same", "PATCH", list, onA, "first-primary"],
    ["a delete", "DELETE", list, onA, "first-primary"],
  ];
  for (const [name, method, _path, sent, expected] of cases) it(name, () => expect(sessionConstraint(method, "A", sent)).toBe(expected));
});

describe("bookmarks given and read back", () => {
  const keys = env.ENCRYPTION_KEY!;
  const bookmark = { shard: "A", d1: "00000000-00000016-00000000-00000000000000000000000000000000" };

  it("read back as given, for the account they were given to only", async () => {
    const given = await issueBookmark(keys, "acct_1", bookmark);
    expect(parseBookmark(given)).toMatchObject(bookmark);
    expect(await readBookmark(keys, "acct_1", given)).toEqual(bookmark);
    expect(await readBookmark(keys, "acct_2", given)).toBe("foreign");
  });

  it("still read after the key is rotated (new key first, old listed), and unverifiable once the old key is dropped", async () => {
    const given = await issueBookmark(keys, "acct_1", bookmark);
    const newer = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));
    expect(await readBookmark(`${newer},${keys}`, "acct_1", given)).toEqual(bookmark);
    expect(await readBookmark(newer, "acct_1", given)).toBe("unverifiable");
    // A tag made up under a listed key's id is not taken.
    const [, shard, d1, keyId] = given.split(".");
    expect(await readBookmark(keys, "acct_1", `b1.${shard}.${d1}.${keyId}.AAAAAAAAAAAAAAAAAAAAAA`)).toBe("foreign");
  });

  const malformed: [string, string][] = [
    ["empty", ""],
    ["no version", "A.1.0123abcd.AAAAAAAAAAAAAAAAAAAAAA"],
    ["another version", "b2.A.1.0123abcd.AAAAAAAAAAAAAAAAAAAAAA"],
    ["a shard name with a dot", "b1.A.B.1.0123abcd.AAAAAAAAAAAAAAAAAAAAAA"],
    ["a D1 part with a space", "b1.A.1 2.0123abcd.AAAAAAAAAAAAAAAAAAAAAA"],
    ["no key id", "b1.A.1.AAAAAAAAAAAAAAAAAAAAAA"],
    ["a key id in capitals", "b1.A.1.0123ABCD.AAAAAAAAAAAAAAAAAAAAAA"],
    ["a long tag", "b1.A.1.0123abcd.AAAAAAAAAAAAAAAAAAAAAAA"],
    ["a D1 part longer than 128", `b1.A.${"1".repeat(129)}.0123abcd.AAAAAAAAAAAAAAAAAAAAAA`],
  ];
  for (const [name, text] of malformed) it(`refuse as malformed: ${name}`, async () => expect(await readBookmark(keys, "acct_1", text)).toBe("malformed"));
});
