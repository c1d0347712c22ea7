import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

// The Lua scripts, one file each under lua/, whose headers say what every KEYS and ARGV slot holds. They
// run as commands of the connection: EVALSHA, with the text sent only when Redis does not have it yet.
const lua = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
const SCRIPTS = {
  acceptSpanEventsLua: lua('accept-span-events'),
  sweepUnconfirmedLua: lua('sweep-unconfirmed'),
  forgetLostSpanEventsLua: lua('forget-lost-span-events'),
  releaseForgottenMarksLua: lua('release-forgotten-marks'),
  deleteIfEqualLua: lua('delete-if-equal'),
  reserveBudgetsLua: lua('reserve-budgets'),
  settleBudgetsLua: lua('settle-budgets'),
};

declare module 'ioredis' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- an augmentation repeats the interface's type parameter
  interface RedisCommander<Context> {
    acceptSpanEventsLua(numKeys: number, ...args: (string | number)[]): Promise<string[]>;
    sweepUnconfirmedLua(numKeys: number, ...args: (string | number)[]): Promise<[number, number, number]>;
    forgetLostSpanEventsLua(numKeys: number, ...args: (string | number)[]): Promise<number>;
    releaseForgottenMarksLua(numKeys: number, ...args: (string | number)[]): Promise<[number, number, string]>;
    deleteIfEqualLua(numKeys: number, ...args: (string | number)[]): Promise<number>;
    reserveBudgetsLua(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
    settleBudgetsLua(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  }
}

/** The connection, with the scripts defined on it (once per connection). */
export function withScripts(redis: Redis): Redis {
  for (const [name, script] of Object.entries(SCRIPTS))
    if (!(name in redis)) redis.defineCommand(name, { lua: script });
  return redis;
}
