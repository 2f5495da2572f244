import { describe, expect, it } from "vitest";
import { call, makePayment, makeTenant } from "../helpers/api";
import { allEnded, HOOK_USER, mailbox, receivedAt, secondAttempt, subscribeToReceiver, waitFor } from "../helpers/webhooks";
import { parseTraceparent, parseTracestate, traceOf } from "../../src/webhooks/wire/trace";
import { binLag, lagBin, lagPercentile, lagBins } from "../../src/webhooks/subscriptions/lag";
import { parse } from "../../packages/verify/index.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

describe("traceparent, as the W3C Trace Context reads it", () => {
  it.each([
    ["version 00", PARENT, { traceId: TRACE_ID, flags: "01" }],
    ["unsampled", `00-${TRACE_ID}-00f067aa0ba902b7-00`, { traceId: TRACE_ID, flags: "00" }],
    ["a later version, read by its first four fields", `01-${TRACE_ID}-00f067aa0ba902b7-01-what-comes-next`, { traceId: TRACE_ID, flags: "01" }],
    ["version ff", `ff-${TRACE_ID}-00f067aa0ba902b7-01`, null],
    ["version 00 with more after the flags", `${PARENT}-x`, null],
    ["upper-case hex", PARENT.toUpperCase(), null],
    ["a trace id of zeros", `00-${"0".repeat(32)}-00f067aa0ba902b7-01`, null],
    ["a parent id of zeros", `00-${TRACE_ID}-${"0".repeat(16)}-01`, null],
    ["a short trace id", `00-${TRACE_ID.slice(1)}-00f067aa0ba902b7-01`, null],
    ["10 KB", `00-${TRACE_ID}-00f067aa0ba902b7-01`.padEnd(10_240, "0"), null],
    ["not one at all", "hello", null],
    ["empty", "", null],
  ])("%s", (_name, header, expected) => {
    expect(parseTraceparent(header)).toEqual(expected);
  });

  it.each([
    ["members kept, spaces trimmed", "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"],
    ["a tenant@system key", "fw529a3039@dt=aaa", "fw529a3039@dt=aaa"],
    ["an upper-case key", "Congo=1", null],
    ["a member without =", "congo", null],
    ["33 members", Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(","), null],
    ["over 512 characters", `a=${"v".repeat(600)}`, null],
  ])("tracestate: %s", (_name, header, expected) => {
    expect(parseTracestate(header)).toBe(expected);
  });

  it("starts a new trace for a write without a valid one", () => {
    const made = traceOf("nonsense", "congo=1");
    expect(made.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(made.traceId).not.toBe(TRACE_ID);
    expect(made.state).toBeNull();
  });
});

describe("traces across the webhook", () => {
  it("passes the write's trace to every attempt of its deliveries, a new span id each time, and shows trace_id", async () => {
    const { client, processor } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client);
    const { payment } = await makePayment(client);
    const event = await call("POST", `/v2/payments/${payment.id}/events`, {
      body: { event_code: "PU10", description: "Traced" },
      headers: { ...processor.headers, traceparent: PARENT, tracestate: "congo=t61rcWkgMzE" },
    });
    expect(event.status).toBe(201);
    await allEnded(client, [subscription.id]);
    const got = await waitFor(
      () => receivedAt(box),
      (list) => list.length === 2,
    );
    const traced = got.find((r) => r.headers["hook-payment-version"] === "2")!;
    const [, traceId, spanId, flags] = traced.headers.traceparent!.split("-");
    expect({ traceId, flags, tracestate: traced.headers.tracestate }).toEqual({ traceId: TRACE_ID, flags: "01", tracestate: "congo=t61rcWkgMzE" });
    expect(spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(spanId).not.toBe("00f067aa0ba902b7");
    // The kit reads it.
    expect(parse({ body: traced.body, headers: traced.headers }).trace).toMatchObject({ traceId: TRACE_ID, spanId, flags: "01" });
    // The creation's delivery started a trace of its own.
    const creation = got.find((r) => r.headers["hook-payment-version"] === "1")!;
    expect(creation.headers.traceparent!.split("-")[1]).not.toBe(TRACE_ID);
    // The record shows it, and a second attempt keeps the trace with a new span.
    const log = await call("GET", `/v1/webhooks/${subscription.id}/deliveries/${traced.headers["webhook-id"]}/`, { headers: client.headers });
    expect(log.json.trace_id).toBe(TRACE_ID);
    await secondAttempt(client, subscription.id, box);
    const again = (await receivedAt(box)).at(-1)!;
    expect(again.headers["webhook-id"]).toBe(traced.headers["webhook-id"]);
    expect(again.headers.traceparent!.split("-")[1]).toBe(TRACE_ID);
    expect(again.headers.traceparent!.split("-")[2]).not.toBe(spanId);
  });

  it.each([
    ["10 KB", `00-${TRACE_ID}-00f067aa0ba902b7-01`.padEnd(10_240, "0")],
    ["malformed", "00-xyz"],
    ["version ff", `ff-${TRACE_ID}-00f067aa0ba902b7-01`],
  ])("ignores a %s traceparent: the write succeeds and its deliveries start a trace of their own", async (_name, header) => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client);
    const res = await call("POST", "/v2/payments/", { body: {}, headers: { ...client.headers, traceparent: header } });
    expect(res.status).toBe(400); // the body is wrong, not the header
    const { payment } = await makePayment({ ...client, headers: { ...client.headers, traceparent: header } });
    expect(payment.id).toMatch(/^pmt_/);
    await allEnded(client, [subscription.id]);
    const [delivery] = await receivedAt(box);
    expect(delivery!.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(delivery!.headers.traceparent!.split("-")[1]).not.toBe(TRACE_ID);
  });
});

describe("the lag a receiver sees", () => {
  it.each([
    [1, 0],
    [1.18, 1],
    [1.19, 2],
    [1000, Math.ceil(Math.log(1000) / Math.log(1.18))],
  ])("puts a lag of %s ms in bin %i", (lag, bin) => {
    expect(lagBin(lag)).toBe(bin);
  });

  it("answers each percentile within 10% of the lags it counted", () => {
    const lags = Array.from({ length: 1000 }, (_, i) => 5 + i * 37);
    const sorted = [...lags].sort((a, b) => a - b);
    for (const share of [0.5, 0.95, 0.99]) {
      const exact = sorted[Math.ceil(share * sorted.length) - 1]!;
      expect(Math.abs(lagPercentile(lagBins(lags), share)! - exact) / exact).toBeLessThanOrEqual(0.1);
    }
    // Any lag is answered within 10%, give or take the millisecond it is rounded to.
    for (let lag = 2; lag < 3e8; lag *= 1.07) expect(Math.abs(binLag(lagBin(lag)) - lag)).toBeLessThanOrEqual(0.1 * lag + 0.5);
  });

  it("shows succeeded_at and lag_ms on each delivery and p50/p95/p99 lag in /stats/, within 10% of what a slow receiver measured", async () => {
    const { client } = await makeTenant();
    const { subscription, box } = await subscribeToReceiver(client);
    const delayMs = 700;
    await mailbox({ secret: subscription.secret, ...HOOK_USER, delayMs }, box.path);
    const { buyer, supplier } = await makePayment(client);
    for (let i = 0; i < 5; i++) await makePayment(client, { buyer, supplier });
    await allEnded(client, [subscription.id]);
    const got = await receivedAt(box);
    expect(got).toHaveLength(6);
    const measured: number[] = [];
    for (const r of got) {
      const record = await call("GET", `/v1/webhooks/${subscription.id}/deliveries/${r.headers["webhook-id"]}/`, { headers: client.headers });
      // What the receiver measured: from the change's commit to its answer (a timer late on a busy machine included).
      const lag = r.answered_at! - Date.parse(record.json.created);
      expect(r.answered_at! - r.received_at).toBeGreaterThanOrEqual(delayMs - 1);
      measured.push(lag);
      expect(record.json.succeeded_at).not.toBeNull();
      expect(record.json.lag_ms).toBe(Date.parse(record.json.succeeded_at) - Date.parse(record.json.created));
      expect(Math.abs(record.json.lag_ms - lag) / lag).toBeLessThanOrEqual(0.1);
    }
    const stats = await call("GET", `/v1/webhooks/${subscription.id}/stats/?window=1h`, { headers: client.headers });
    const sorted = measured.sort((a, b) => a - b);
    for (const [key, share] of [
      ["p50_lag_ms", 0.5],
      ["p95_lag_ms", 0.95],
      ["p99_lag_ms", 0.99],
    ] as const) {
      const exact = sorted[Math.ceil(share * sorted.length) - 1]!;
      expect(Math.abs(stats.json[key] - exact) / exact, key).toBeLessThanOrEqual(0.1);
    }
    expect(stats.json.series.some((point: { p95_lag_ms: number | null }) => point.p95_lag_ms !== null)).toBe(true);
  });
});
