/**
 * Idempotency keys (docs/interface.md, "Safe retries"): a POST with an `Idempotency-Key` runs
 * once; its answer is stored with the key and replayed to later requests with the same key
 * (middleware/idempotency.ts reads the key; keyed.ts makes it a part of the write's batch).
 */
export { HEADER, KEY_TTL_MS, LOCK_MS, MESSAGES, REPLAYED_HEADER, decide, keyProblem, storable, type Decision, type KeyRow } from "./decision";
export { answerStatement, claimStatements, forgetExpiredKeys, settle, type RequestKey, type StoredKey } from "./store";
export { claimKey, decisionOf, keyedWrite, UNKEYED, type KeyDecision, type Keyed, type KeyedWrite } from "./keyed";
