import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, credentials, status, type ServiceError } from '@grpc/grpc-js';
import { GrpcServer, type GrpcMethodDefinition, type GrpcStreamCall, type UnaryCallback, type UnaryCall } from '../src/index.js';
import { silentLogger } from '../../../test/support/silent-logger.js';

/** A method whose messages are UTF-8 text; a response of 'unserializable' throws, as a serializer bug would. */
const textMethod = (path: string, responseStream: boolean, requestStream = false): GrpcMethodDefinition => ({
  path,
  requestStream,
  responseStream,
  requestDeserialize: (bytes) => bytes.toString('utf8'),
  responseSerialize: (value) => {
    if (value === 'unserializable') throw new Error('cannot serialize');
    return Buffer.from(String(value), 'utf8');
  },
});

const definition = {
  Echo: { ...textMethod('/test.Text/Echo', false), originalName: 'echo' },
  Repeat: textMethod('/test.Text/Repeat', true),
};

const asText = (bytes: Buffer): string => bytes.toString('utf8');
const asBytes = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('GrpcServer', () => {
  let server: GrpcServer;
  let client: Client;

  const echo = (request: string): Promise<string> =>
    new Promise((resolve, reject) =>
      client.makeUnaryRequest('/test.Text/Echo', asBytes, asText, request, (err: ServiceError | null, response?: string) => (err ? reject(err) : resolve(response!))),
    );

  /** The messages of a Repeat call and the status it ended with. */
  const repeat = (request: string): Promise<{ messages: string[]; code: number; details: string }> =>
    new Promise((resolve) => {
      const messages: string[] = [];
      const call = client.makeServerStreamRequest('/test.Text/Repeat', asBytes, asText, request);
      call.on('data', (message: string) => messages.push(message));
      call.on('error', () => undefined);
      call.on('status', ({ code, details }: { code: number; details: string }) => resolve({ messages, code, details }));
    });

  beforeAll(async () => {
    server = new GrpcServer({ maxReceiveMessageBytes: 1024, maxConcurrentStreams: 100, logger: silentLogger() });
    // Keyed by originalName, as proto-loader's camelCase names are (grpc-health-check's handlers are).
    server.addService(definition, {
      echo: (call: UnaryCall<string>, callback: UnaryCallback<string>) => {
        if (call.request === 'throw') throw new Error('handler bug');
        callback(null, call.request);
      },
      Repeat: (call: GrpcStreamCall<string, string>) => {
        call.write('first');
        call.write(call.request);
        call.end();
      },
    });
    const port = await server.listen(0, '127.0.0.1');
    client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  });

  afterAll(async () => {
    client.close();
    await server.close(1000);
  });

  it('should serve unary and server-streaming calls', async () => {
    expect(await echo('hello')).toBe('hello');
    expect(await repeat('again')).toEqual({ messages: ['first', 'again'], code: status.OK, details: '' });
  });

  it('should end a call whose response cannot be serialized INTERNAL, after the messages already sent, and keep serving', async () => {
    await expect(echo('unserializable')).rejects.toMatchObject({ code: status.INTERNAL, details: 'Error serializing response' });
    expect(await repeat('unserializable')).toEqual({ messages: ['first'], code: status.INTERNAL, details: 'Error serializing response' });
    expect(await echo('still serving')).toBe('still serving');
  });

  it('should end a call whose handler throws UNKNOWN, without the error text, and keep serving', async () => {
    await expect(echo('throw')).rejects.toMatchObject({ code: status.UNKNOWN, details: 'Unknown error' });
    expect(await echo('still serving')).toBe('still serving');
  });

  it('should refuse at addService a method without a handler, one served already, and a client-streaming one', () => {
    const other = new GrpcServer({ maxReceiveMessageBytes: 1024, maxConcurrentStreams: 100, logger: silentLogger() });
    expect(() => other.addService({ Echo: textMethod('/test.Other/Echo', false) }, {})).toThrow('no handler for /test.Other/Echo');
    expect(() => other.addService({ Upload: textMethod('/test.Other/Upload', false, true) }, { Upload: () => undefined })).toThrow('client-streaming methods are not supported');
    other.addService({ Echo: textMethod('/test.Other/Echo', false) }, { Echo: () => undefined });
    expect(() => other.addService({ Echo: textMethod('/test.Other/Echo', false) }, { Echo: () => undefined })).toThrow('/test.Other/Echo is served already');
  });
});
