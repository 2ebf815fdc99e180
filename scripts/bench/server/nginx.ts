// nginx terminating TLS in front of the reference server, exactly as docs/server.md shows it
// ("Behind a TLS-terminating proxy"): the site block is read from the page itself and only its
// addresses and certificate paths are filled in, so the benchmark (scripts/bench/tls.ts), the test
// (test/server/nginx.test.ts) and the documentation cannot drift apart.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER_DOC = fileURLToPath(new URL('../../../docs/server.md', import.meta.url));
const SECTION = '### Behind a TLS-terminating proxy (nginx)';
const START_TIMEOUT_MS = 10_000;

export interface NginxSite {
  /** Loopback port nginx listens on with TLS. */
  port: number;
  /** host:port of each reference server process (plain HTTP). */
  upstreams: string[];
  certFile: string;
  keyFile: string;
  /** Directory for nginx's pid file and error log. */
  prefix: string;
}

/** The site block of docs/server.md's nginx section, verbatim. */
function documentedSite(markdown = readFileSync(SERVER_DOC, 'utf8')): string {
  const section = markdown.indexOf(SECTION);
  const start = section === -1 ? -1 : markdown.indexOf('```nginx\n', section);
  const end = start === -1 ? -1 : markdown.indexOf('\n```', start);
  if (end === -1) throw new Error(`${SERVER_DOC}: no \`\`\`nginx block under "${SECTION}"`);
  return markdown.slice(start + '```nginx\n'.length, end + 1);
}

/** Replaces the one match of `pattern` in `text`; the page changing shape is an error, not a silent miss. */
function fillIn(text: string, pattern: RegExp, replacement: string, what: string): string {
  const matches = text.match(new RegExp(pattern.source, `${pattern.flags}g`)) ?? [];
  if (matches.length !== 1) throw new Error(`${SERVER_DOC}: expected one ${what} in the nginx block, found ${matches.length}`);
  return text.replace(pattern, () => replacement);
}

/** The whole nginx.conf: docs/server.md's site with this run's addresses and files, in a minimal main context. */
export function nginxConfig(site: NginxSite): string {
  let block = documentedSite();
  block = fillIn(
    block,
    /^( +)server \S+;\n(?:\1server \S+;\n)*/m,
    site.upstreams.map((a) => `  server ${a};\n`).join(''),
    'upstream server list',
  );
  block = fillIn(block, /^( +)listen 443 ssl;/m, `  listen 127.0.0.1:${site.port} ssl;`, '"listen 443 ssl;" line');
  block = fillIn(block, /^( +ssl_certificate +)\S+;/m, `  ssl_certificate ${site.certFile};`, 'ssl_certificate line');
  block = fillIn(block, /^( +ssl_certificate_key +)\S+;/m, `  ssl_certificate_key ${site.keyFile};`, 'ssl_certificate_key line');
  return `worker_processes 1;
pid ${site.prefix}/nginx.pid;
error_log ${site.prefix}/nginx-error.log warn;
events { worker_connections 4096; }
http {
access_log off;
${block}}
`;
}

/** The nginx binary: on the PATH, or where Debian's package puts it (outside a non-root user's PATH). */
function nginxBinary(): string | undefined {
  return ['nginx', '/usr/sbin/nginx'].find((binary) => {
    try {
      execFileSync(binary, ['-v'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
}

/** Whether nginx is installed. */
export function nginxInstalled(): boolean {
  return nginxBinary() !== undefined;
}

export interface RunningNginx {
  child: ChildProcess;
  /** Fast shutdown (SIGTERM to the master, which stops its workers); resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts nginx in the foreground on `config` (written as `<prefix>/nginx.conf` by the caller) and
 * resolves once its TLS port accepts connections.
 */
export async function launchNginx(site: NginxSite, configFile = join(site.prefix, 'nginx.conf')): Promise<RunningNginx> {
  const binary = nginxBinary();
  if (binary === undefined) throw new Error('nginx is not installed (apt-get install nginx)');
  const child = spawn(binary, ['-p', site.prefix, '-e', join(site.prefix, 'nginx-error.log'), '-c', configFile, '-g', 'daemon off;'], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  for (const started = Date.now(); !(await accepts(site.port));) {
    if (child.exitCode !== null || Date.now() - started > START_TIMEOUT_MS) {
      await stop();
      let log = '';
      try {
        log = readFileSync(join(site.prefix, 'nginx-error.log'), 'utf8');
      } catch {
        // no log written
      }
      throw new Error(`nginx did not start on port ${site.port}:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, stop };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
