// pino logger of the server: JSON lines on stdout (pretty when stdout is a terminal). Requests are
// logged from an allow-list of fields (see app.ts); redaction is the second line of defence so
// that a token, key, password, cookie, Authorization header or evidence never reaches a log.
import pino, { type Logger } from 'pino';

import type { LogLevel } from './logLevels';

const REDACTED_PATHS = [
  'authorization',
  'token',
  'api_key',
  'apiKey',
  'enrollment_token',
  'enrollment_link',
  'evidence',
  'headers',
  'body',
  'password',
  'cookie',
  'admin_token',
  'enroll_secret',
  'enrollSecret',
  '*.authorization',
  '*.token',
  '*.api_key',
  '*.apiKey',
  '*.enrollment_token',
  '*.enrollment_link',
  '*.evidence',
  '*.headers',
  '*.body',
  '*.password',
  '*.cookie',
  '*.admin_token',
  '*.enroll_secret',
  '*.enrollSecret',
];

export interface LoggerOptions {
  level: LogLevel;
  pretty: boolean;
}

export function createLogger(options: LoggerOptions): Logger {
  const destination = options.pretty
    ? // Loaded only for an interactive terminal.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a synchronous, lazy load in the CommonJS bundle
      (require('pino-pretty') as typeof import('pino-pretty')).build({
        colorize: true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,command',
      })
    : pino.destination({ dest: 1, sync: false });
  return pino(
    {
      level: options.level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

/** Writes buffered lines out before the process exits. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}
