import { AppError } from '@sp/core';

/**
 * A record the event refers to is not known (yet): events arrive out of order, or the product
 * synchronization has not finished. 409 makes the provider redeliver later, when it may be there.
 */
export const notSynchronized = (message: string): AppError => new AppError(409, 'not_synchronized', message);

/** The same event is being processed by another request right now; the provider should retry. */
export const eventInProgress = (retryAfterSeconds: number): AppError =>
  new AppError(409, 'in_progress', 'this event is being processed; retry later', { headers: { 'Retry-After': String(retryAfterSeconds) } });

/** The payment provider signature is missing, malformed, stale or made with an unknown secret. */
export const invalidSignature = (): AppError => new AppError(400, 'invalid_signature', 'invalid signature');

/** A signed event that is not what its type promises (not JSON, a field missing or of the wrong type). */
export const malformedEvent = (detail: string): AppError => new AppError(400, 'malformed_event', `malformed event: ${detail}`);


/**
 * A live-mode event at a deployment with a test-mode key, or the reverse: a misconfiguration (the
 * endpoint's signing secret and the API key are of different modes). 400 so the provider keeps
 * retrying and shows the failure in its dashboard, and nothing is lost once the configuration is fixed.
 */
export const livemodeMismatch = (eventLivemode: boolean): AppError =>
  new AppError(
    400,
    'livemode_mismatch',
    `${eventLivemode ? 'live' : 'test'}-mode event refused: this deployment's PAYMENT_PROVIDER_API_KEY is a ${eventLivemode ? 'test' : 'live'}-mode key`,
  );
