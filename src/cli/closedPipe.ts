// A reader that stops reading (`device-agent-server device list | head`) closes the pipe; the next
// write fails with EPIPE, which Node reports as an unhandled 'error' event with a stack trace.
// The output is no longer wanted, so the program ends quietly, as `head`'s other writers do.
import type { Writable } from 'node:stream';

/** On a closed standard output or error, exit at once with status 0 and no message. */
export function endQuietlyOnClosedPipe(streams: readonly Writable[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(0);
      throw error;
    });
  }
}
