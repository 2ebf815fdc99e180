// undici's own files, imported one by one by src/agent/undiciParts.ts, which gives them the types
// of undici's public API.
declare module 'undici/lib/*';
