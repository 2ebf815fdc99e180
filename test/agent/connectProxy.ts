// A minimal HTTP CONNECT proxy (what HTTPS_PROXY/HTTP_PROXY point to): it records the authorities it
// tunnelled to. undici tunnels with CONNECT for http:// targets too. `hosts` stands in for the
// proxy's DNS: a name the test machine cannot resolve reaches the address given for it.
import { once } from 'node:events';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';

export interface ConnectProxy {
  url: string;
  /** host:port of every CONNECT. */
  readonly tunnels: string[];
  stop(): Promise<void>;
}

export async function startConnectProxy(hosts: Record<string, string> = {}): Promise<ConnectProxy> {
  const tunnels: string[] = [];
  const proxy = createServer((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req, client, head) => {
    tunnels.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), hosts[host ?? ''] ?? host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    tunnels,
    stop: () => {
      proxy.closeAllConnections();
      return new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
