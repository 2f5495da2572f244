/**
 * Idempotency keys (docs/interface.md, "Safe retries"): a POST with an `Idempotency-Key` runs
 * once; its answer is stored with the key and replayed to later requests with the same key
 * (middleware/idempotency.ts).
 */
export { HEADER, KEY_TTL_MS, LOCK_MS, MESSAGES, REPLAYED_HEADER, decide, keyProblem, storable, type Decision, type KeyRow } from "./decision";
export { answerStatement, claimStatements, forgetExpiredKeys, isKeyLost, ownStatement, settle, storedKey, type Claim, type StoredKey } from "./store";
export { noAnswer, type Answer } from "./answer";
