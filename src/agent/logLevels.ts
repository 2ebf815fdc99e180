// Log levels the agent accepts (--log-level, DEVICE_AGENT_LOG_LEVEL); pino's names.
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
