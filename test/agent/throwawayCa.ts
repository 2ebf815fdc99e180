// A throwaway certificate authority and a server certificate for 127.0.0.1/localhost, made with
// openssl for one test run: the agent must trust it only when given --ca-file.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/agent';

/** A name only the test proxy resolves (to 127.0.0.1): a server that is not loopback to the agent. */
export const PROXIED_HOST = 'agents.device-agent.test';

export interface ThrowawayCa {
  /** PEM file of the CA certificate (what --ca-file gets). */
  caFile: string;
  /** PEM of the server's certificate and key. */
  cert: string;
  key: string;
}

export function makeThrowawayCa(): ThrowawayCa {
  const dir = tempDir('device-agent-ca-');
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=device-agent test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
  );
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
  );
  writeFileSync(file('server.ext'), `subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:${PROXIED_HOST}\nextendedKeyUsage=serverAuth\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    file('server.ext'),
    '-out',
    file('server.pem'),
  );
  return { caFile: file('ca.pem'), cert: readFileSync(file('server.pem'), 'utf8'), key: readFileSync(file('server.key'), 'utf8') };
}
