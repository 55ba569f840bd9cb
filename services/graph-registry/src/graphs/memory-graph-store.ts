import { createMemoryFederationStore } from '../federation/memory-federation-store.js';
import { LIST_PAGE_SIZE, type GraphStore } from './graph-store.js';
import { createMemorySchemaVersions } from '../schemas/memory-schema-versions.js';

/**
 * Graphs in this process' memory: lost on restart and not shared between replicas, so only
 * meant for local runs (`STORE_URL=memory://`); the app warns when it is chosen.
 */
export function createMemoryGraphStore(): GraphStore {
  const graphs = new Map<string, string>();
  let schema: string | undefined;
  const versions = createMemorySchemaVersions({
    get: () => schema,
    set: (sdl) => {
      schema = sdl;
    },
  });
  return {
    name: 'memory',
    versions,
    federation: createMemoryFederationStore(),
    getUrl: (name) => Promise.resolve(graphs.get(name)),
    setUrl(name, url) {
      graphs.set(name, url);
      return Promise.resolve();
    },
    deleteUrl: (name) => Promise.resolve(graphs.delete(name)),
    async *listUrls() {
      const names = [...graphs.keys()].sort();
      for (let start = 0; start < names.length; start += LIST_PAGE_SIZE) {
        const page = new Map<string, string>();
        for (const name of names.slice(start, start + LIST_PAGE_SIZE)) {
          const url = graphs.get(name);
          if (url !== undefined) page.set(name, url);
        }
        yield await Promise.resolve(page);
      }
    },
    countGraphs: () => Promise.resolve(graphs.size),
    getSchema: () => Promise.resolve(schema),
    setSchema(sdl) {
      schema = sdl;
      return Promise.resolve();
    },
    schemaBytes: () => Promise.resolve(schema === undefined ? 0 : Buffer.byteLength(schema, 'utf8')),
    check: () => Promise.resolve(),
    close() {
      graphs.clear();
      schema = undefined;
      return Promise.resolve();
    },
  };
}
