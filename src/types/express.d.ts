import type { Logger } from 'pino';

declare global {
  namespace Express {
    interface Request {
      /** Set for every request by the request-context middleware. */
      id: string;
      log: Logger;
      /** Set on /v1 routes by the authentication middleware. */
      auth: { accountId: string; livemode: boolean };
      /** The raw JSON body, kept for idempotency fingerprints. */
      rawBody?: Buffer;
    }
  }
}

export {};
