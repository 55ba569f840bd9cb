import { randomInt } from 'node:crypto';

/** A fresh valid German mobile number in E.164 (+49 151 + 8 digits), so tests never share state. */
export function newPhoneNumber(): string {
  return `+49151${String(randomInt(10_000_000, 100_000_000))}`;
}

/** The same number as a person would type it. */
export function formatted(phoneNumber: string): string {
  return `${phoneNumber.slice(0, 3)} ${phoneNumber.slice(3, 6)} ${phoneNumber.slice(6)}`;
}
