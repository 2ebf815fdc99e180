// docs/openapi.json is generated from the wire schemas: it must be current, internally
// consistent, and its examples must satisfy the schemas they illustrate.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { EXAMPLES, openApiDocument, renderOpenApi } from '../../src/protocol/openapi';
import * as schemas from '../../src/protocol/schemas';

/** The parts of the document (and of its JSON Schemas) these tests read. */
interface SchemaNode {
  enum?: unknown[];
  required?: string[];
  maxItems?: number;
  properties?: Record<string, SchemaNode>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, SchemaNode> };
}

const committed = readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8');

function collectRefs(value: unknown, refs: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((item) => collectRefs(item, refs));
  else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') refs.push(child);
      else collectRefs(child, refs);
    }
  }
  return refs;
}

describe('docs/openapi.json', () => {
  test('is what `npm run openapi` generates from the current schemas', () => {
    expect(committed, 'docs/openapi.json is stale: run `npm run openapi` and commit it').toBe(renderOpenApi());
  });

  test('is OpenAPI 3.1 with the four POST routes of the agent API, its extensions (register, policy, device page), and the admin API beside them', () => {
    const document = JSON.parse(committed) as OpenApiDocument;
    expect(document.openapi).toBe('3.1.0');
    const agentPaths = Object.keys(document.paths).filter((path) => !path.startsWith('/api/admin/v1/'));
    expect(agentPaths.sort()).toEqual([...Object.values(schemas.ROUTES), ...Object.values(schemas.EXTENSION_ROUTES)].sort());
    expect(document.paths[schemas.EXTENSION_ROUTES.policy]?.post).toMatchObject({ 'x-extension': true });
    expect(document.paths[schemas.EXTENSION_ROUTES.register]?.post).toMatchObject({ 'x-extension': true });
    expect(document.paths[schemas.EXTENSION_ROUTES.devicePage]?.post).toMatchObject({ 'x-extension': true });
    for (const path of agentPaths) expect(Object.keys(document.paths[path]!)).toEqual(['post']);
    expect(
      Object.keys(document.paths)
        .filter((path) => path.startsWith('/api/admin/v1/'))
        .sort(),
    ).toEqual([
      '/api/admin/v1/audit',
      '/api/admin/v1/compliance',
      '/api/admin/v1/compliance/daily',
      '/api/admin/v1/devices',
      '/api/admin/v1/devices/{id}',
      '/api/admin/v1/devices/{id}/changes',
      '/api/admin/v1/devices/{id}/history',
      '/api/admin/v1/devices/{id}/labels',
      '/api/admin/v1/devices/{id}/revoke',
      '/api/admin/v1/enroll-secrets',
      '/api/admin/v1/enroll-secrets/{id}',
      '/api/admin/v1/exceptions',
      '/api/admin/v1/exceptions/{id}',
      '/api/admin/v1/failures',
      '/api/admin/v1/organizations/{org}/contact',
      '/api/admin/v1/policy',
      '/api/admin/v1/policy/history',
      '/api/admin/v1/webhooks',
      '/api/admin/v1/webhooks/{id}',
      '/api/admin/v1/webhooks/{id}/deliveries',
    ]);
  });

  test('every $ref resolves', () => {
    const document = openApiDocument();
    for (const ref of collectRefs(document)) {
      const target = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<unknown>(
          (node, part) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined),
          document,
        );
      expect(target, ref).toBeDefined();
    }
  });

  test('the wire enums and limits are in the document', () => {
    const components = (openApiDocument() as unknown as OpenApiDocument).components.schemas;
    expect(components.Platform?.enum).toEqual([...schemas.PLATFORMS]);
    expect(components.PostureStatus?.enum).toEqual([...schemas.STATUSES]);
    expect(components.PosturesRequest?.properties?.results?.maxItems).toBe(schemas.MAX_RESULTS_PER_REQUEST);
    expect(components.PostureResult?.required).toEqual(['check_key', 'status', 'observed_at']);
    expect(components.Error?.properties?.error?.enum).toEqual([...schemas.ERROR_CODES]);
  });

  test.each(Object.entries(EXAMPLES))('the %s example satisfies its schema', (name, example) => {
    const schema = schemas[name as keyof typeof EXAMPLES];
    expect(schema.safeParse(example).error).toBeUndefined();
  });
});
