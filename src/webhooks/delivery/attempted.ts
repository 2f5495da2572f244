import type { DeliveryRow } from "./lease";
import type { AttemptResult } from "./attempt";
import type { Outcome } from "./outcome";

/**
 * An attempt made: the delivery it was for, what the receiver did, and what that means for it.
 * Made in a run (lease.ts `leaseRun`): `handsOn` when the run goes on to its payment's next
 * delivery, and `givenBack`, what the run leased after it and does not reach.
 */
export interface Attempted {
  delivery: DeliveryRow;
  result: AttemptResult;
  outcome: Outcome;
  handsOn?: boolean;
  givenBack?: DeliveryRow[];
}

/** When an attempt ended. */
export const endOf = ({ result }: Pick<Attempted, "result">) => result.startedAt + result.durationMs;
