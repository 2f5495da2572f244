import type { DeliveryRow } from "./lease";
import type { AttemptResult } from "./attempt";
import type { Outcome } from "./outcome";

/** An attempt made: the delivery it was for, what the receiver did, and what that means for it. */
export interface Attempted {
  delivery: DeliveryRow;
  result: AttemptResult;
  outcome: Outcome;
}

/** When an attempt ended. */
export const endOf = ({ result }: Pick<Attempted, "result">) => result.startedAt + result.durationMs;
