import pino, { type Logger } from 'pino';

/** Anything that can carry a secret is redacted before a log line is written. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.password',
  '*.key',
  '*.secret',
  '*.secret_key',
  '*.token',
  '*.pat',
  'password',
  'key',
  'secret',
  'secret_key',
  'token',
  'pat',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { app: 'fjord' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
