// How the processes log: JSON lines for whatever collects them, and readable lines for a person at a terminal.
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

/**
 * Where logs go: a readable, synchronous (so nothing is lost at exit) rendering when standard output is a
 * terminal; undefined otherwise, for pino's JSON lines on standard output, which tests and collectors read.
 */
export function logDestination(): DestinationStream | undefined {
  if (!process.stdout.isTTY) return undefined;
  return pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname' });
}

export function createLogger(name: string, level: string): Logger {
  const destination = logDestination();
  return destination ? pino({ name, level }, destination) : pino({ name, level });
}
