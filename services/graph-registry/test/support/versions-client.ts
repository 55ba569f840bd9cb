import type { Client } from './registry-fixture.js';

/** The fields of a version the tests look at. */
export interface VersionBody {
  version: number;
  sha256: string;
  publisher: string;
  previousVersion: number | null;
  rollbackOf: number | null;
  counts: { breaking: number; dangerous: number; safe: number };
  sdl?: string;
  report?: { changes: Array<{ class: string; kind: string; coordinate: string | null }>; counts: object };
}

/** The schema endpoints of issue 30, over a test client (each answer checked against openapi.yaml). */
export function versionsApi(api: Client) {
  return {
    publish: (sdl: string, headers: Record<string, string> = {}) => api.send({ method: 'POST', path: '/schema', headers: { 'content-type': 'application/graphql', ...headers }, body: sdl }),
    dryRun: (sdl: string) => api.send({ method: 'POST', path: '/schema?dryRun=true', headers: { 'content-type': 'application/graphql' }, body: sdl }),
    rollback: (version: number, headers: Record<string, string> = {}) =>
      api.send({ method: 'POST', path: '/schema/rollback', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ version }) }),
    list: async (query = '') => (await api.get(`/schema/versions${query}`)).json as { versions: VersionBody[]; next: string | null },
    get: (version: number) => api.get(`/schema/versions/${version}`),
    diff: (from: number, to: number) => api.get(`/schema/diff?from=${from}&to=${to}`),
  };
}

/** A distinct valid schema per number: each differs from the one before by one removed and one added field. */
export const schemaNumber = (i: number): string => `type Query {\n  f${i}: Int\n}\n`;
