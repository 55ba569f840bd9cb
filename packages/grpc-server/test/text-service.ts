import { connect, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { GrpcServer, type GrpcMethodDefinition, type GrpcServerLimits, type GrpcStreamCall, type LimitName, type UnaryCall, type UnaryCallback } from '../src/index.js';
import { silentLogger } from '../../../test/support/silent-logger.js';

// A small service on GrpcServer for the transport's own tests: messages are UTF-8 text, and the
// request says what the handler does, so each test drives the server from the wire alone.

const textMethod = (path: string, responseStream: boolean, requestStream = false): GrpcMethodDefinition => ({
  path,
  requestStream,
  responseStream,
  requestDeserialize: (bytes) => bytes.toString('utf8'),
  responseSerialize: (value) => Buffer.from(String(value), 'utf8'),
});

export const ECHO = '/test.Text/Echo';
export const REPEAT = '/test.Text/Repeat';
export const CHAT = '/test.Text/Chat';

/** What a handler saw of one call: whether it ran, and its signal when the call ended. */
export interface HandlerRecord {
  request: string;
  deadline: number | undefined;
  aborted?: string;
}

export interface TextService {
  server: GrpcServer;
  port: number;
  address: string;
  /** Every call a handler ran, by request. */
  handled: HandlerRecord[];
  /** Every limit the server reported acting. */
  limits: LimitName[];
  close(): Promise<void>;
}

/**
 * Echo answers its request: `hang` never answers (its record gets the signal's abort), `slow:N`
 * after N ms, `big:N` N bytes, `fail` an Error with a code and a secret in its message, `throw` throws one. Repeat writes its request `count:size` as
 * that many messages of that size. Chat answers each message with itself.
 */
export async function startTextService(limits: Partial<GrpcServerLimits> = {}): Promise<TextService> {
  const handled: HandlerRecord[] = [];
  const reported: LimitName[] = [];
  const server = new GrpcServer({ maxReceiveMessageBytes: 1024 * 1024, logger: silentLogger(), onLimit: (limit) => reported.push(limit), ...limits });
  server.addService(
    { Echo: textMethod(ECHO, false), Repeat: textMethod(REPEAT, true), Chat: textMethod(CHAT, true, true) },
    {
      Echo: (call: UnaryCall<string>, callback: UnaryCallback<string>) => {
        const record: HandlerRecord = { request: call.request, deadline: call.deadline };
        handled.push(record);
        call.signal.addEventListener('abort', () => (record.aborted = (call.signal.reason as Error).name));
        if (call.request === 'hang') return;
        if (call.request === 'fail') return callback(Object.assign(new Error('/etc/secret: permission denied'), { code: 13 }));
        if (call.request === 'throw') throw new Error('/etc/secret: permission denied');
        const slow = /^slow:(\d+)$/.exec(call.request);
        if (slow !== null) return void setTimeout(() => callback(null, 'slow'), Number(slow[1]));
        const big = /^big:(\d+)$/.exec(call.request);
        callback(null, big === null ? call.request : 'x'.repeat(Number(big[1])));
      },
      Repeat: (call: GrpcStreamCall<string, string>) => {
        const [count = 0, size = 0] = call.request.split(':').map(Number);
        for (let i = 0; i < count && !call.cancelled; i++) call.write('r'.repeat(size));
        call.end();
      },
      Chat: (call: GrpcStreamCall<string, string>) => {
        call.on('data', (message: string) => call.write(message));
        call.on('end', () => call.end());
      },
    },
  );
  const port = await server.listen(0, '127.0.0.1');
  return { server, port, address: `127.0.0.1:${port}`, handled, limits: reported, close: () => server.close(1000) };
}

/** A unary Echo through grpc-js, as a client library sends it. */
export function echo(client: Client, request: string, options: { deadlineMs?: number; metadata?: Metadata } = {}): Promise<string> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      ECHO,
      (text: string) => Buffer.from(text),
      (bytes: Buffer) => bytes.toString(),
      request,
      options.metadata ?? new Metadata(),
      options.deadlineMs === undefined ? {} : { deadline: Date.now() + options.deadlineMs },
      (err: ServiceError | null, response?: string) => (err ? reject(err) : resolve(response!)),
    ),
  );
}

export const grpcClient = (address: string): Client => new Client(address, credentials.createInsecure());

/** The request headers of a call as a raw node:http2 client sends them. */
export const requestHeaders = (path: string, extra: OutgoingHttpHeaders = {}): OutgoingHttpHeaders => ({
  ':method': 'POST',
  ':path': path,
  'content-type': 'application/grpc',
  te: 'trailers',
  ...extra,
});

/** What a node:http2 client saw of one stream. */
export interface StreamOutcome {
  headers: IncomingHttpHeaders | undefined;
  trailers: IncomingHttpHeaders | undefined;
  body: Buffer;
  rstCode: number | undefined;
}

/** The status a client reads: from the trailers, or the headers of a Trailers-Only answer. */
export const statusOf = (outcome: StreamOutcome): unknown => (outcome.trailers ?? outcome.headers)?.['grpc-status'];
export const messageOf = (outcome: StreamOutcome): unknown => (outcome.trailers ?? outcome.headers)?.['grpc-message'];

/** Everything the server sends on `stream` until it closes. */
export function outcomeOf(stream: ClientHttp2Stream): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    let headers: IncomingHttpHeaders | undefined;
    let trailers: IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    stream.on('response', (received) => (headers = received));
    stream.on('trailers', (received: IncomingHttpHeaders) => (trailers = received));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', () => undefined);
    stream.on('close', () => resolve({ headers, trailers, body: Buffer.concat(chunks), rstCode: stream.rstCode }));
  });
}

export function h2Session(address: string): Promise<ClientHttp2Session> {
  const session = connect(`http://${address}`);
  session.on('error', () => undefined);
  return new Promise((resolve, reject) => session.once('remoteSettings', () => resolve(session)).once('error', reject));
}

/** A gRPC length-prefixed message of UTF-8 text. */
export const message = (text: string): Buffer => {
  const body = Buffer.from(text);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(body.length, 1);
  return Buffer.concat([prefix, body]);
};

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
