// Agents behind a TLS-terminating proxy (`serve --trust-proxy`). Every connection then comes from
// the proxy, so the per-address connection cap cannot see the agents: connections from a trusted
// proxy are exempt from it (they still count against the overall cap), and instead one agent
// address, read from X-Forwarded-For, may have at most that many requests in flight through it.
// X-Forwarded-For is believed only from a configured proxy, never from anyone else: fastify's
// request.ip walks the header from the right and stops at the first address that is not a proxy.
import { BlockList, isIP } from 'node:net';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { HttpError } from './errors';
import { UsageError } from './usage';

export const TRUST_PROXY_HINT = 'a comma-separated list of IP addresses and CIDR ranges (e.g. 127.0.0.1,10.0.0.0/8,fd00::/8)';

export class TrustedProxies {
  private readonly list = new BlockList();

  /** `text`: addresses and CIDR ranges, comma-separated; throws UsageError on anything else. */
  constructor(readonly text: string) {
    const entries = text.split(',').map((entry) => entry.trim());
    for (const entry of entries) {
      const [address = '', prefix, extra] = entry.split('/');
      const family = isIP(address);
      const bits = family === 4 ? 32 : 128;
      if (family === 0 || extra !== undefined || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits))) {
        throw new UsageError(`--trust-proxy: "${entry}" is not an IP address or CIDR range; expected ${TRUST_PROXY_HINT}`);
      }
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (prefix === undefined) this.list.addAddress(address, type);
      else this.list.addSubnet(address, Number(prefix), type);
    }
  }

  /** Whether a connection from `address` comes from a configured proxy. */
  has(address: string | undefined): boolean {
    if (address === undefined) return false;
    // A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d.
    const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const family = isIP(plain);
    return family !== 0 && this.list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
  }
}

export interface ForwardedLimits {
  proxies: TrustedProxies;
  /** Requests in flight per forwarded agent address (--max-connections-per-address); 0: no cap. */
  perAddress: number;
}

/**
 * onRequest hook, before authentication: counts the requests in flight per forwarded agent
 * address and answers 429 past the cap. Requests that did not come through a proxy are left to
 * the connection cap.
 */
export function limitForwardedAddresses(limits: ForwardedLimits) {
  const inFlight = new Map<string, number>();
  return function limitForwarded(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    if (limits.perAddress === 0 || !limits.proxies.has(request.socket.remoteAddress)) return done();
    const address = request.ip;
    const count = inFlight.get(address) ?? 0;
    if (count >= limits.perAddress) {
      throw new HttpError('too_many_requests', `${limits.perAddress} requests from this address are in flight; retry after 1 s`, {
        'retry-after': '1',
      });
    }
    inFlight.set(address, count + 1);
    reply.raw.once('close', () => {
      const left = (inFlight.get(address) ?? 1) - 1;
      if (left === 0) inFlight.delete(address);
      else inFlight.set(address, left);
    });
    done();
  };
}
