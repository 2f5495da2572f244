/**
 * Gathers items that arrive close together and hands each group to `flush`, one group at a
 * time: what ends within `ms` of the first of a group is written in one batch. `done()` flushes
 * the rest and resolves when every group is written. A failed flush is passed to `failed`.
 */
export function gather<T>(flush: (items: T[]) => Promise<void>, failed: (items: T[], error: unknown) => void, ms = 20) {
  let pending: T[] = [];
  let chain: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const send = () => {
    timer = undefined;
    const items = pending;
    pending = [];
    if (items.length > 0) chain = chain.then(() => flush(items).catch((error) => failed(items, error)));
  };
  return {
    add(item: T) {
      pending.push(item);
      timer ??= setTimeout(send, ms);
    },
    async done() {
      if (timer) clearTimeout(timer);
      send();
      await chain;
    },
  };
}
