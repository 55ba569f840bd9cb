import type { Cluster, Redis } from 'ioredis';
import { createRedisLeases, type RedisRun } from '@sp/storage';
import type { SchemaChangeReport } from '@sp/graphs';
import { APPEND_VERSION_LUA, createRedisAnnouncementLog, createRedisSchemaHistory, type HistoryKeys } from '../schemas/redis-schema-versions.js';
import { infoOf } from '../schemas/schema-versions.js';
import { supergraphInfoOf, type ArtifactKind, type FederationCommit, type FederationStore, type SupergraphVersionInfo } from './federation-store.js';

/**
 * Every federation key carries the hash tag `{graph:federation}`: on a Redis Cluster they all
 * hash to one slot, so one script stores a subgraph version and the supergraph version composed
 * with it, or neither.
 */
const TAG = '{graph:federation}';

export const FEDERATION_KEYS = {
  /** The composer's lease (federation/supergraph-composer.ts). */
  composer: `${TAG}:composer`,
  /** The lease of the announcer of subgraph publishes (schemas/schema-announcer.ts). */
  announcer: `${TAG}:announcer`,
  supergraph: {
    /** Hash: `last`, the newest supergraph number; `announced`, the highest whose subgraph publish's event was sent. */
    state: `${TAG}:supergraph:state`,
    order: `${TAG}:supergraph:versions`,
    /** Hashes by version number. */
    info: `${TAG}:supergraph:info`,
    reports: `${TAG}:supergraph:reports`,
    artifacts: {
      supergraph: `${TAG}:supergraph:artifact:supergraph`,
      sdl: `${TAG}:supergraph:artifact:sdl`,
      services: `${TAG}:supergraph:artifact:services`,
      metadata: `${TAG}:supergraph:artifact:metadata`,
    } satisfies Record<ArtifactKind, string>,
    /** Hash version → id, and its reverse id → version (the versioned CDN paths). */
    ids: `${TAG}:supergraph:ids`,
    versionsById: `${TAG}:supergraph:versions-by-id`,
  },
  /** A subgraph's schema history (the graph name cannot contain `:`, so names never collide). */
  subgraph: (name: string): HistoryKeys => ({
    state: `${TAG}:subgraph:${name}:state`,
    order: `${TAG}:subgraph:${name}:versions`,
    info: `${TAG}:subgraph:${name}:info`,
    sdl: `${TAG}:subgraph:${name}:sdl`,
    reports: `${TAG}:subgraph:${name}:reports`,
  }),
};

/**
 * KEYS 1-10: the supergraph's state, order, info, reports, four artifact hashes, ids and
 * versions-by-id; 11-15: the subgraph's state, order, info, sdl, reports. ARGV 1-9: the expected
 * supergraph number, its retention, info, report, the four artifacts, the id; 10: `publish`,
 * `remove` or `none`; 11: '1' when its SchemaPublishedEvent is pending (note_announcement);
 * 12-16 (publish): the subgraph's expected number, retention, info, SDL, report.
 * Returns the new supergraph number, or 0 when either number moved on (nothing written).
 */
const COMMIT = `${APPEND_VERSION_LUA}
local last = tonumber(redis.call('HGET', KEYS[1], 'last') or '0')
if last ~= tonumber(ARGV[1]) then return 0 end
if ARGV[10] == 'publish' then
  local sub = tonumber(redis.call('HGET', KEYS[11], 'last') or '0')
  if sub ~= tonumber(ARGV[12]) then return 0 end
  append_version(KEYS[11], KEYS[12], {KEYS[13], KEYS[14], KEYS[15]}, {ARGV[14], ARGV[15], ARGV[16]}, sub + 1, tonumber(ARGV[13]))
elseif ARGV[10] == 'remove' then
  redis.call('DEL', KEYS[12], KEYS[13], KEYS[14], KEYS[15])
end
note_announcement(KEYS[1], last, ARGV[11])
local n = last + 1
local keep = tonumber(ARGV[2])
local excess = redis.call('ZCARD', KEYS[2]) + 1 - keep
if excess > 0 then
  for _, version in ipairs(redis.call('ZRANGE', KEYS[2], 0, excess - 1)) do
    local id = redis.call('HGET', KEYS[9], version)
    if id then redis.call('HDEL', KEYS[10], id) end
  end
end
append_version(KEYS[1], KEYS[2], {KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]}, {ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]}, n, keep)
redis.call('HSET', KEYS[10], ARGV[9], n)
return n
`;

function commitArguments(commit: FederationCommit): { keys: string[]; args: string[] } {
  const K = FEDERATION_KEYS.supergraph;
  const { supergraph, subgraph } = commit;
  const sub = FEDERATION_KEYS.subgraph(subgraph.kind === 'none' ? supergraph.cause.subgraph : subgraph.name);
  const keys = [K.state, K.order, K.info, K.reports, K.artifacts.supergraph, K.artifacts.sdl, K.artifacts.services, K.artifacts.metadata, K.ids, K.versionsById, sub.state, sub.order, sub.info, sub.sdl, sub.reports];
  const { artifacts } = supergraph;
  const args = [String(commit.expected), String(commit.keep), JSON.stringify(supergraphInfoOf(supergraph)), JSON.stringify(supergraph.report), artifacts.supergraph, artifacts.sdl, artifacts.services, artifacts.metadata, supergraph.id, subgraph.kind, commit.eventPending ? '1' : '0'];
  if (subgraph.kind === 'publish') args.push(String(subgraph.expected), String(subgraph.keep), JSON.stringify(infoOf(subgraph.entry)), subgraph.entry.sdl, JSON.stringify(subgraph.entry.report));
  return { keys, args };
}

/** Subgraph schemas and supergraph versions on Redis (standalone, Sentinel or Cluster). */
export function createRedisFederationStore(redis: Redis | Cluster, run: RedisRun): FederationStore {
  const K = FEDERATION_KEYS.supergraph;
  const leases = createRedisLeases(redis, run);
  const json = <T>(text: string | null): T | undefined => (text === null ? undefined : (JSON.parse(text) as T));
  return {
    subgraph: (name) => createRedisSchemaHistory(redis, run, FEDERATION_KEYS.subgraph(name)),
    subgraphSdls: (members) => Promise.all(members.map(async ({ name, version }) => (await run(() => redis.hget(FEDERATION_KEYS.subgraph(name).sdl, String(version)))) ?? undefined)),
    lastSupergraph: async () => Number((await run(() => redis.hget(K.state, 'last'))) ?? 0),
    supergraphInfo: async (version) => json<SupergraphVersionInfo>(await run(() => redis.hget(K.info, String(version)))),
    async listSupergraphs(before, limit) {
      const max = before === undefined ? '+inf' : `(${before}`;
      const numbers = await run(() => redis.zrevrangebyscore(K.order, max, '-inf', 'LIMIT', 0, limit));
      if (numbers.length === 0) return [];
      const infos = await run(() => redis.hmget(K.info, ...numbers));
      return infos.flatMap((text) => (text === null ? [] : [JSON.parse(text) as SupergraphVersionInfo]));
    },
    supergraphReport: async (version) => json<SchemaChangeReport>(await run(() => redis.hget(K.reports, String(version)))),
    artifact: async (version, kind) => (await run(() => redis.hget(K.artifacts[kind], String(version)))) ?? undefined,
    async versionOfId(id) {
      const version = await run(() => redis.hget(K.versionsById, id));
      return version === null ? undefined : Number(version);
    },
    async commit(commit) {
      const { keys, args } = commitArguments(commit);
      return (await run(() => redis.eval(COMMIT, keys.length, ...keys, ...args))) !== 0;
    },
    ...createRedisAnnouncementLog(redis, run, K.state, FEDERATION_KEYS.announcer),
    acquireComposer: (token, ttlMs) => leases.acquire(FEDERATION_KEYS.composer, token, ttlMs),
    async releaseComposer(token) {
      await leases.release(FEDERATION_KEYS.composer, token);
    },
  };
}
