// The admin side of the real server: admin tokens and console accounts made with the real admin
// CLI, and console sessions opened through the real sign-in form over HTTP.
import { request, type Dispatcher } from 'undici';
import { parseJson } from './json';
import { runServerCli, serverEnv, type RunningServer } from './server';
import { spawn } from 'node:child_process';
import { SERVER_BIN } from './server';

export type Reach = { org: string } | { allOrgs: true };

const reachFlags = (reach: Reach) => ('org' in reach ? ['--org', reach.org] : ['--all-orgs']);

export async function createAdminToken(
  server: RunningServer,
  reach: Reach,
  label = 'tests',
): Promise<{ token_id: string; admin_token: string }> {
  const { stdout } = await runServerCli(['token', 'create', '--db', server.dbPath, '--label', label, '--json', ...reachFlags(reach)]);
  return parseJson(stdout);
}

/** `device-agent-server admin <args>` with `input` on standard input; resolves with the exit code and output. */
export function runAdmin(args: readonly string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // Never spawnSync: a test blocked on a child cannot see its HTTP connections close meanwhile.
  const child = spawn(process.execPath, [SERVER_BIN, 'admin', ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: serverEnv() });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(input);
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** `admin add` with the password on standard input; resolves with the exit code and output. */
export function addAccount(
  server: Pick<RunningServer, 'dbPath'>,
  email: string,
  reach: Reach,
  password: string,
  extraFlags: readonly string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runAdmin(['add', '--db', server.dbPath, '--email', email, ...reachFlags(reach), ...extraFlags], `${password}\n`);
}

export interface Page {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A cookie jar of one browser-less console user. */
export class ConsoleClient {
  private readonly cookies = new Map<string, string>();

  /** `dispatcher`: how to connect (a CA to trust, a local address to connect from); undici's global one by default. */
  constructor(
    private readonly server: Pick<RunningServer, 'url'>,
    private readonly dispatcher?: Dispatcher,
  ) {}

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.send('GET', path, undefined, headers);
  }

  /** A form POST; `_csrf` is taken from `csrfFrom` (a page's hidden field) unless given. */
  async post(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
    return this.send('POST', path, new URLSearchParams(form).toString(), {
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    });
  }

  async send(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Page> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const answer = await request(`${this.server.url}${path}`, {
      method,
      headers: { ...(cookie ? { cookie } : {}), ...headers },
      body,
      ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
    });
    const setCookie = answer.headers['set-cookie'];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() };
  }

  /** The CSRF token of a page the client loads (its forms' hidden `_csrf` field). */
  async csrfToken(path = '/console/sign-in'): Promise<string> {
    const page = await this.get(path);
    const token = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
    if (token === undefined) throw new Error(`no CSRF field on ${path} (status ${page.status}):\n${page.text}`);
    return token;
  }

  async signIn(email: string, password: string): Promise<Page> {
    const csrf = await this.csrfToken('/console/sign-in');
    return this.post('/console/sign-in', { _csrf: csrf, email, password });
  }
}
