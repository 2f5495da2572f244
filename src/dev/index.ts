/**
 * Development only: what `npm start`, the soak, the tests and the benchmark switch on locally.
 * None of it acts in the deployed configuration: the fault switches need ALLOW_LOCAL_WEBHOOK_URLS,
 * the platform's limits PLATFORM_LIMITS, and the restart sweep the local "@restart" cron (the D1
 * tally behind SERVER_TIMING is db/counting-d1.ts). A reader of the engine can skip this folder.
 */
export { deliveriesQueue, retryTimeScale } from "./local-faults";
export { lostAtRestart } from "./restart-sweep";
export { underPlatformLimits } from "./within-limits";
