// Writes docs/openapi.json from the wire schemas (`npm run openapi`). test/protocol/openapi.test.ts
// fails when the committed file is not what this produces.
import { writeFileSync } from 'node:fs';
import { renderOpenApi } from '../src/protocol/openapi';

const target = new URL('../docs/openapi.json', import.meta.url);
writeFileSync(target, renderOpenApi());
process.stdout.write(`wrote ${target.pathname}\n`);
