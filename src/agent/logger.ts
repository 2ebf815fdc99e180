// The agent's logger (CLI commands and the daemon): pino to stderr, human-readable on a terminal,
// JSON lines otherwise. Call sites log allow-listed fields only; redaction of credential-shaped
// fields is a safety net, not the policy. pino-pretty runs as a synchronous stream in this thread:
// pino transports (worker threads) break once bundled.
import { pino, type Logger } from 'pino';

import type { LogLevel } from './logLevels';

export type { Logger } from 'pino';
const REDACTED_PATHS = [
  'apiKey',
  'api_key',
  'token',
  'link',
  'authorization',
  'Authorization',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.link',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
];

export interface LoggerOptions {
  level: LogLevel;
  /** Default: process.stderr. */
  destination?: NodeJS.WritableStream & { isTTY?: boolean; fd?: number };
  /** Default: when the destination is a terminal. */
  pretty?: boolean;
}

export async function createLogger(options: LoggerOptions): Promise<Logger> {
  const destination = options.destination ?? process.stderr;
  const pretty = options.pretty ?? destination.isTTY === true;
  const settings = {
    level: options.level,
    base: { pid: process.pid },
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
  };
  if (!pretty) {
    const fd = destination.fd;
    return pino(settings, fd !== undefined ? pino.destination({ fd, sync: true }) : destination);
  }
  const { default: pinoPretty } = await import('pino-pretty');
  return pino(settings, pinoPretty({ destination, sync: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss' }));
}
