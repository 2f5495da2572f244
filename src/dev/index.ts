/**
 * Development only: what `npm start`, the soak, the tests and the benchmark switch on locally.
 * None of it acts in the deployed configuration: the fault switches need ALLOW_LOCAL_WEBHOOK_URLS,
 * and the platform's limits PLATFORM_LIMITS (the D1 tally behind SERVER_TIMING is
 * db/counting-d1.ts). Only the edge (src/index.ts) imports it: the engine gets what it sets as
 * configuration, so a reader of the engine can skip this folder.
 */
export { localSettings } from "./local-faults";
export { underPlatformLimits } from "./within-limits";
