/**
 * Development only: what `npm start`, the soak, the tests and the benchmark switch on locally.
 * None of it acts in the deployed configuration: the fault switches need ALLOW_LOCAL_WEBHOOK_URLS,
 * the D1 tally SERVER_TIMING, the platform's limits PLATFORM_LIMITS, and the restart sweep the
 * local "@restart" cron. A reader of the engine can skip this folder.
 */
export { deliveriesQueue, retryTimeScale } from "./local-faults";
export { countingD1, newTally, serverTiming, type D1Tally } from "../db/counting-d1";
export { lostAtRestart } from "./restart-sweep";
export { underPlatformLimits } from "./within-limits";
