import { describe, expect, it } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import { AppError, badRequest, failedPrecondition, toAppError, toGrpcStatus, tooManyRequests, unavailable } from '../src/errors.js';

describe('errors', () => {
  it('should expose client errors and hide server errors', () => {
    expect(badRequest('phoneNumber is invalid')).toMatchObject({ status: 400, code: 'bad_request', expose: true });
    expect(unavailable('redis')).toMatchObject({ status: 503, expose: false, message: 'redis is unavailable' });
    expect(toAppError(new Error('db password is x'))).toMatchObject({ status: 500, message: 'internal server error', expose: false });
  });

  it('should keep the status of exposed http errors (e.g. from body parsers)', () => {
    const httpError = Object.assign(new Error('request entity too large'), { status: 413, expose: true });
    expect(toAppError(httpError)).toMatchObject({ status: 413, code: 'payload_too_large', message: 'request entity too large' });
  });

  it('should carry Retry-After on 429', () => {
    expect(tooManyRequests(12.2).headers).toEqual({ 'Retry-After': '13' });
  });

  it('should map to gRPC status codes without leaking internals', () => {
    expect(toGrpcStatus(badRequest('key is empty'))).toEqual({ code: status.INVALID_ARGUMENT, details: 'key is empty' });
    expect(toGrpcStatus(unavailable('redis'))).toEqual({ code: status.UNAVAILABLE, details: 'redis is unavailable' });
    expect(toGrpcStatus(new AppError(404, 'not_found', 'no such key'))).toEqual({ code: status.NOT_FOUND, details: 'no such key' });
    expect(toGrpcStatus(failedPrecondition('not a counter'))).toEqual({ code: status.FAILED_PRECONDITION, details: 'not a counter' });
    expect(toGrpcStatus(new TypeError('cannot read x of undefined'))).toEqual({ code: status.UNKNOWN, details: 'internal error' });
  });
});
