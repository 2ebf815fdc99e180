// A secret read as one line: from the terminal without echo, or from standard input when it is a
// pipe or file (`printf %s "$PASSWORD" | device-agent-server admin add …`). Never from argv.
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { UsageError } from '../server/usage';

const MAX_SECRET_BYTES = 4096;

export async function readSecretLine(prompt: string): Promise<string> {
  const secret = process.stdin.isTTY ? await fromTerminal(prompt) : await fromPipe();
  if (secret === '') throw new UsageError('no password given (type it at the prompt, or pipe it to standard input)');
  return secret;
}

function fromTerminal(prompt: string): Promise<string> {
  process.stderr.write(prompt);
  // What is typed is not echoed: readline writes to a sink.
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const lines = createInterface({ input: process.stdin, output: silent, terminal: true });
  return new Promise((resolve) => {
    lines.once('line', (line) => {
      lines.close();
      process.stderr.write('\n');
      resolve(line);
    });
    lines.once('close', () => resolve(''));
  });
}

async function fromPipe(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (Buffer.byteLength(text) > MAX_SECRET_BYTES)
      throw new UsageError(`the password on standard input exceeds ${MAX_SECRET_BYTES} bytes`);
  }
  // One line: a trailing newline (echo, a here-string) is not part of it.
  return text.replace(/\r?\n$/, '');
}
