import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context';

export const HEALTH_PATH = '/healthz';

/** 200 once the server listens and its database answers. */
export function healthRoute(app: FastifyInstance, { store }: AppContext): void {
  app.get(HEALTH_PATH, async () => {
    await store.ping();
    return { status: 'ok' };
  });
}
