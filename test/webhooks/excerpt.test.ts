import { describe, expect, it } from "vitest";
import { excerptOf } from "../../src/webhooks/delivery/attempt";

describe("the excerpt the log keeps of an answer", () => {
  it.each([
    ["a short answer, whole", "ok", "ok"],
    ["an ASCII answer, its first 500 characters", "x".repeat(600), "x".repeat(500)],
    ["two-byte characters, as many as fit 500 bytes", "é".repeat(400), "é".repeat(250)],
    ["three-byte characters, as many as fit 500 bytes", "語".repeat(400), "語".repeat(166)],
    ["never half of a surrogate pair", "a" + "😀".repeat(200), "a" + "😀".repeat(124)],
    ["mixed, within both limits", "é".repeat(100) + "x".repeat(300), "é".repeat(100) + "x".repeat(300)],
  ])("%s", (_, answer, kept) => {
    const excerpt = excerptOf(answer);
    expect(excerpt).toBe(kept);
    expect(new TextEncoder().encode(excerpt).length).toBeLessThanOrEqual(500);
  });
});
