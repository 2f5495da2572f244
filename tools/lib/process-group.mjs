// Stopping a server started with `detached: true` (its own process group: node, wrangler, workerd).

/** SIGTERM to the whole group, SIGKILL after 10 s, and resolves once the leader has exited. */
export async function stopGroup(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((done) => child.once("exit", done));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  }, 10_000);
  await exited;
  clearTimeout(timer);
}
