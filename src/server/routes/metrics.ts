import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context';

export const METRICS_PATH = '/metrics';

/** GET /metrics: Prometheus' text format (src/server/metrics.ts says what it holds). */
export function metricsRoute(app: FastifyInstance, { metrics }: AppContext): void {
  app.get(METRICS_PATH, async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
}
