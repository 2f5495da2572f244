/**
 * One invocation's share of Cloudflare's limits, as the platform counts them (src/lib/platform-limits.ts):
 * connections waiting at once (a seventh waits for one of six to answer), D1 queries, subrequests,
 * the size of a D1 result and of a bound value, a SQL function's arguments, and the work left after
 * the event, cut WAIT_UNTIL_MS after it. Over a limit is a PlatformLimitError, thrown where the
 * platform would fail the call. The figures say how close the invocation came to each limit.
 */
import {
  D1_MAX_FUNCTION_ARGUMENTS,
  D1_MAX_RESULT_BYTES,
  D1_MAX_VALUE_BYTES,
  D1_QUERIES_PER_INVOCATION,
  SIMULTANEOUS_CONNECTIONS,
  SUBREQUESTS_PER_INVOCATION,
  WAIT_UNTIL_MS,
} from "../lib/platform-limits";
import { widestFunctionCall } from "./sql-functions";

export class PlatformLimitError extends Error {
  override name = "PlatformLimitError";
}

export interface Limits {
  connections: number;
  d1Queries: number;
  subrequests: number;
  resultBytes: number;
  valueBytes: number;
  functionArguments: number;
  waitUntilMs: number;
  /** Added to every D1 round trip to the primary, and to one a read replica may serve, for measuring at a distance; 0 adds nothing. */
  d1RoundTripMs: number;
  d1ReplicaRoundTripMs: number;
}

export const CLOUDFLARE: Limits = {
  connections: SIMULTANEOUS_CONNECTIONS,
  d1Queries: D1_QUERIES_PER_INVOCATION,
  subrequests: SUBREQUESTS_PER_INVOCATION,
  resultBytes: D1_MAX_RESULT_BYTES,
  valueBytes: D1_MAX_VALUE_BYTES,
  functionArguments: D1_MAX_FUNCTION_ARGUMENTS,
  waitUntilMs: WAIT_UNTIL_MS,
  d1RoundTripMs: 0,
  d1ReplicaRoundTripMs: 0,
};

/** What an invocation used: each beside its limit in the benchmark's tables. */
export interface Figures {
  d1Calls: number;
  /** Of those, the round trips a read replica may serve (D1's Sessions API); the others go to the primary. */
  d1ReplicaCalls: number;
  d1Queries: number;
  subrequests: number;
  peakConnections: number;
  /** Connections that had to wait for one of the others to answer (a fetch's timeout runs meanwhile). */
  waitedConnections: number;
  largestResultBytes: number;
  largestValueBytes: number;
}

export class InvocationBudget {
  readonly figures: Figures = {
    d1Calls: 0,
    d1ReplicaCalls: 0,
    d1Queries: 0,
    subrequests: 0,
    peakConnections: 0,
    waitedConnections: 0,
    largestResultBytes: 0,
    largestValueBytes: 0,
  };
  private open = 0;
  private readonly waiting: (() => void)[] = [];
  private cutReason: string | null = null;
  private cutTimer: ReturnType<typeof setTimeout> | undefined;
  /** Settles when the work after the event is cut (tests wait on it instead of the clock). */
  readonly cut: Promise<void>;
  private markCut!: () => void;

  constructor(readonly limits: Limits = CLOUDFLARE) {
    this.cut = new Promise((done) => (this.markCut = done));
  }

  /** The event has been answered: what is still running has `waitUntilMs` left. */
  eventEnded(): void {
    this.cutTimer ??= setTimeout(() => {
      this.cutReason = `work in waitUntil went on past ${this.limits.waitUntilMs / 1000} s after the event, and Cloudflare cancels it there`;
      this.markCut();
    }, this.limits.waitUntilMs);
  }

  /** The invocation's work is all done: nothing is left to cut. */
  finished(): void {
    clearTimeout(this.cutTimer);
  }

  /** Runs `work` as one outgoing connection: it waits while `connections` others wait for their answers. */
  async connection<T>(work: () => Promise<T>): Promise<T> {
    this.refuseWhenCut();
    if (this.open >= this.limits.connections) this.figures.waitedConnections += 1;
    while (this.open >= this.limits.connections) await new Promise<void>((done) => this.waiting.push(done));
    this.refuseWhenCut();
    this.open += 1;
    this.figures.peakConnections = Math.max(this.figures.peakConnections, this.open);
    try {
      return await work();
    } finally {
      this.open -= 1;
      this.waiting.shift()?.();
    }
  }

  subrequest(what: string): void {
    this.figures.subrequests += 1;
    if (this.figures.subrequests > this.limits.subrequests)
      throw new PlatformLimitError(`${what}: more than ${this.limits.subrequests} subrequests in one invocation`);
  }

  /** One round trip to D1 carrying `statements` queries, to the primary or one a replica may serve. */
  d1Call(statements: number, replica = false): void {
    this.figures.d1Calls += 1;
    if (replica) this.figures.d1ReplicaCalls += 1;
    this.figures.d1Queries += statements;
    if (this.figures.d1Queries > this.limits.d1Queries) throw new PlatformLimitError(`D1: more than ${this.limits.d1Queries} queries in one invocation`);
  }

  statement(sql: string): void {
    const widest = widestFunctionCall(sql);
    if (widest > this.limits.functionArguments)
      throw new PlatformLimitError(`D1: a SQL function called with ${widest} arguments, over ${this.limits.functionArguments}: ${sql.slice(0, 200)}`);
  }

  value(bytes: number): void {
    this.figures.largestValueBytes = Math.max(this.figures.largestValueBytes, bytes);
    if (bytes > this.limits.valueBytes) throw new PlatformLimitError(`D1: a bound value of ${bytes} bytes, over ${this.limits.valueBytes}`);
  }

  result(bytes: number): void {
    this.figures.largestResultBytes = Math.max(this.figures.largestResultBytes, bytes);
    if (bytes > this.limits.resultBytes) throw new PlatformLimitError(`D1: a result of ${bytes} bytes, over ${this.limits.resultBytes}`);
  }

  private refuseWhenCut(): void {
    if (this.cutReason) throw new PlatformLimitError(this.cutReason);
  }
}

/** Bytes a value takes in a D1 result or binding: strings as UTF-8 (counted as one byte a character below U+0080), blobs as they are, numbers 8. */
export function valueBytes(value: unknown): number {
  if (typeof value === "string") return utf8Length(value);
  if (value instanceof ArrayBuffer) return value.byteLength;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + valueBytes(item), 0);
  if (value && typeof value === "object") return Object.values(value).reduce((sum: number, item) => sum + valueBytes(item), 0);
  return 8;
}

function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) bytes += code >= 0x800 && (code < 0xd800 || code > 0xdfff) ? 2 : 1;
  }
  return bytes;
}
