import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context';

export const HEALTH_PATH = '/healthz';
export const READY_PATH = '/readyz';
/** Longer than a healthy database's answer on a busy machine, shorter than a load balancer's check timeout. */
const READY_DEADLINE_MS = 2_000;

/**
 * GET /healthz: live (the process answers; a database outage must not get every instance
 * restarted). GET /readyz: ready for traffic: the database answers and its schema is the one this
 * program knows (not migrated further by a newer instance). A load balancer sends agents only to
 * ready instances; a stopping instance stops accepting connections, which takes it out too.
 */
export function healthRoute(app: FastifyInstance, { store }: AppContext): void {
  app.get(HEALTH_PATH, () => ({ status: 'ok' }));
  app.get(READY_PATH, async (_request, reply) => {
    let schema;
    let deadline: NodeJS.Timeout | undefined;
    try {
      // A frozen database would hold the answer for the pool's timeouts; a health check wants it now.
      const late = new Promise<never>((_resolve, reject) => {
        deadline = setTimeout(() => reject(new Error('late')), READY_DEADLINE_MS);
      });
      schema = await Promise.race([store.schemaVersions(), late]);
    } catch {
      return reply.code(503).send({ status: 'unavailable', reason: 'the database does not answer' });
    } finally {
      clearTimeout(deadline);
    }
    if (schema.found !== schema.known) {
      return reply.code(503).send({
        status: 'unavailable',
        reason: `the database schema is version ${schema.found}; this program runs version ${schema.known}`,
      });
    }
    return { status: 'ok' };
  });
}
