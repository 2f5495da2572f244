import { describe, expect, it } from "vitest";
import { inTurn, linesOpen } from "../../src/lib/in-turn";

/** A work whose end the test decides, noting when it starts. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, work: async () => (log.push(`${name} starts`), await opened, log.push(`${name} ends`), name) };
}
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("inTurn", () => {
  it("runs work with one key one at a time, in the order it came", async () => {
    const log: string[] = [];
    const [a, b, c] = ["a", "b", "c"].map((name) => gate(log, name));
    const results = [inTurn("pmt_1", a!.work), inTurn("pmt_1", b!.work), inTurn("pmt_1", c!.work)];
    await tick();
    expect(log).toEqual(["a starts"]);
    c!.open();
    b!.open();
    await tick();
    expect(log).toEqual(["a starts"]);
    a!.open();
    expect(await Promise.all(results)).toEqual(["a", "b", "c"]);
    expect(log).toEqual(["a starts", "a ends", "b starts", "b ends", "c starts", "c ends"]);
    expect(linesOpen()).toBe(0);
  });

  it("runs work with different keys side by side", async () => {
    const log: string[] = [];
    const [a, b] = ["a", "b"].map((name) => gate(log, name));
    const results = [inTurn("pmt_1", a!.work), inTurn("pmt_2", b!.work)];
    await tick();
    expect(log).toEqual(["a starts", "b starts"]);
    b!.open();
    a!.open();
    expect(await Promise.all(results)).toEqual(["a", "b"]);
  });

  it("gives the next its turn when a work fails, and hands the failure to its own caller", async () => {
    const failing = inTurn("pmt_1", async () => {
      throw new Error("refused");
    });
    const next = inTurn("pmt_1", async () => "next");
    await expect(failing).rejects.toThrow("refused");
    expect(await next).toBe("next");
    expect(linesOpen()).toBe(0);
  });

  it("stops waiting for a turn that never ends after its patience", async () => {
    const log: string[] = [];
    const stuck = gate(log, "stuck"); // never opened: its request was cancelled mid-way
    void inTurn("pmt_1", stuck.work);
    expect(await inTurn("pmt_1", async () => "went on", 20)).toBe("went on");
    expect(log).toEqual(["stuck starts"]);
    stuck.open();
  });
});
