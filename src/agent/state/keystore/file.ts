// `file` key store: the key alone in one 0600 file of the 0700 state directory, written atomically.
import { rm } from 'node:fs/promises';
import { KeyStoreUnavailableError, firstLine } from '../../errors';
import { isCode, readFileIfExists, syncDirectory, writeFileAtomic } from '../atomicFile';
import type { KeyStore } from './types';
import { dirname } from 'node:path';

export function fileKeyStore(file: string): KeyStore {
  const unavailable = (err: unknown) => new KeyStoreUnavailableError('file', `${file}: ${firstLine(err)}`);
  return {
    backend: 'file',
    async get() {
      try {
        const text = await readFileIfExists(file);
        return text === null ? null : text.trim();
      } catch (err) {
        throw unavailable(err);
      }
    },
    async set(key) {
      try {
        await writeFileAtomic(file, `${key}\n`);
      } catch (err) {
        throw unavailable(err);
      }
    },
    async delete() {
      try {
        await rm(file, { force: true });
        await syncDirectory(dirname(file));
      } catch (err) {
        if (!isCode(err, 'ENOENT')) throw unavailable(err);
      }
    },
    // The state directory was just written to (the enrollment record), which is all a file needs.
    async prepare() {},
  };
}
