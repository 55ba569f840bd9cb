// The framework's ceiling: @grpc/grpc-js serving the cache proto with handlers that answer a constant.
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { cacheServiceDefinition } from '@sp/cache-client';

const response = { found: true, value: Buffer.from('"constant"'), expiresAtUnixMs: 0 };
const answer = (_call: unknown, callback: (err: null, value: typeof response) => void): void => callback(null, response);
const server = new Server();
server.addService(cacheServiceDefinition(), { Get: answer, Set: answer, Remove: answer });
server.bindAsync(`127.0.0.1:${process.env.PORT}`, ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.stdout.write(`listening ${port}\n`);
});
process.on('SIGTERM', () => server.forceShutdown());
