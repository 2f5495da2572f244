// The Worker isolate's inspector under `wrangler dev` (workerd's --inspector-addr), for the
// benchmark's probes (memory.mjs, profile.mjs).
import { execSync } from "node:child_process";
import WebSocket from "ws";

/** The workerd processes under a process group, each with its role: "worker" (entry on port 0) or "entry". */
export const workerds = (group) =>
  execSync(`ps -eo pid,pgid,args | awk '$2 == ${group} && /workerd serve/ {print $1 " " ($0 ~ /entry=127.0.0.1:0/ ? "worker" : "entry")}'`)
    .toString()
    .trim()
    .split("\n")
    .map((line) => line.split(" "));

/** Opens the inspector of the workerd `pid`; `send(method, params)` gives up after 5 s (workerd does not answer every method). */
export async function openInspector(pid) {
  const ports = [
    ...execSync(`ss -ltnp | grep "pid=${pid},"`)
      .toString()
      .matchAll(/(?:127\.0\.0\.1|localhost|\[::1\]):(\d+)/g),
  ].map((m) => m[1]);
  let targets = [];
  for (const p of ports) {
    targets = await fetch(`http://127.0.0.1:${p}/json/list`).then(
      (r) => r.json(),
      () => [],
    );
    if (targets.length > 0) break;
  }
  const target = targets.find((t) => /payments-api/.test(t.id + t.title)) ?? targets[0];
  const ws = new WebSocket(target.webSocketDebuggerUrl.replace("localhost", "127.0.0.1"));
  await new Promise((done) => ws.once("open", done));
  let seq = 0;
  const waiting = new Map();
  ws.on("message", (data) => {
    const message = JSON.parse(data);
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  const send = (method, params = {}, timeoutMs = 5000) =>
    Promise.race([
      new Promise((done) => {
        const id = ++seq;
        waiting.set(id, done);
        ws.send(JSON.stringify({ id, method, params }));
      }),
      new Promise((done) => setTimeout(() => done({}), timeoutMs)),
    ]);
  return { send, close: () => ws.close() };
}
