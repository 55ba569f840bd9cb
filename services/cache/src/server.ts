import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import { ReflectionService } from '@grpc/reflection';
import { cacheServiceDefinition } from '@sp/cache-client';
import { reflectionPackageDefinition } from './reflection-descriptors.js';

export const CACHE_SERVICE_NAME = 'cache.v1.CacheGrpcService';

export interface CacheServer {
  server: Server;
  health: HealthImplementation;
  /** Sets the gRPC health status of the server ('') and of the cache service. */
  setServing(serving: boolean): void;
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting calls and waits for in-flight ones, cutting them after `graceMs`. */
  close(graceMs: number): Promise<void>;
}

/** One gRPC server carrying the cache service, grpc.health.v1.Health and server reflection. */
export function createCacheServer(cacheService: UntypedServiceImplementation): CacheServer {
  const server = new Server({ 'grpc.max_receive_message_length': 8 * 1024 * 1024 });
  server.addService(cacheServiceDefinition(), cacheService);
  const health = new HealthImplementation({ '': 'NOT_SERVING', [CACHE_SERVICE_NAME]: 'NOT_SERVING' });
  health.addToServer(server);
  new ReflectionService(reflectionPackageDefinition()).addToServer(server);

  return {
    server,
    health,
    setServing(serving) {
      const state: ServingStatus = serving ? 'SERVING' : 'NOT_SERVING';
      health.setStatus('', state);
      health.setStatus(CACHE_SERVICE_NAME, state);
    },
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, boundPort) => (err ? reject(err) : resolve(boundPort)));
      }),
    close: (graceMs) =>
      new Promise((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
