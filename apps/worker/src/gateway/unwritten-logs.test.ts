import { describe, expect, it } from 'vitest';
import { UnwrittenLogs } from './unwritten-logs';

/** A write that ends when the test says. */
function pendingWrite() {
  let end!: () => void;
  const write = new Promise<void>((resolve) => (end = resolve));
  return { write, end };
}

/** Whether `promise` has settled by the end of this turn of the event loop. */
async function settledNow(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('UnwrittenLogs', () => {
  it('lets a job go before its log is written, until more than its bound are unwritten', async () => {
    const logs = new UnwrittenLogs(2);
    const [a, b, c] = [pendingWrite(), pendingWrite(), pendingWrite()];
    expect(await settledNow(logs.add(a.write))).toBe(true);
    expect(await settledNow(logs.add(b.write))).toBe(true);
    const third = logs.add(c.write);
    expect(await settledNow(third)).toBe(false);
    c.end();
    expect(await settledNow(third)).toBe(true);
    // Written ones no longer count: another may go at once.
    a.end();
    await a.write;
    expect(await settledNow(logs.add(pendingWrite().write))).toBe(true);
  });

  it('is settled only once every write taken has ended', async () => {
    const logs = new UnwrittenLogs(10);
    const [a, b] = [pendingWrite(), pendingWrite()];
    await logs.add(a.write);
    await logs.add(b.write);
    a.end();
    const settled = logs.settled();
    expect(await settledNow(settled)).toBe(false);
    b.end();
    expect(await settledNow(settled)).toBe(true);
  });
});
