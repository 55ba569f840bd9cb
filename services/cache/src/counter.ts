import { failedPrecondition } from '@sp/core';

/**
 * A counter is stored as its decimal digits in ASCII, so Get shows it and a JSON serializer reads
 * it as a number. Values stay within ±(2^53 - 1): the wire's int64 is read as a JavaScript number,
 * and Redis' Lua computes in doubles.
 */
const COUNTER = /^-?\d{1,16}$/;

export const notACounter = (): Error => failedPrecondition('the live value under this key is not a counter');
export const counterOutOfRange = (): Error => failedPrecondition(`the counter would leave the range ±${Number.MAX_SAFE_INTEGER}`);

/** The counter held in `text`, or undefined when it is not one. */
export function parseCounter(text: string): number | undefined {
  if (!COUNTER.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** `current + delta`, refusing a result outside the safe integer range. */
export function addToCounter(current: number, delta: number): number {
  const next = current + delta;
  if (!Number.isSafeInteger(next)) throw counterOutOfRange();
  return next;
}

export const formatCounter = (value: number): Buffer => Buffer.from(String(value), 'latin1');
