import { z } from 'zod';
import { malformedEvent } from '../errors.js';

/**
 * The shape every payment provider event must have before anything is done with it, and the shape
 * of `data.object` for each handled type. Built once at module load (zod schemas are reusable
 * parsers). Only the fields the service reads are checked; Stripe's other fields pass untouched.
 */

const id = z.string().trim().min(1);
/** Stripe expands some references into objects; either way only the id is used. */
const reference = z.union([id, z.looseObject({ id })]);
const idOf = (value: z.infer<typeof reference>): string => (typeof value === 'string' ? value : value.id);
const optionalReference = reference.nullable().transform((value) => (value === null ? null : idOf(value)));
const currency = z.string().regex(/^[a-z]{3}$/, 'expected a three-letter ISO 4217 code in lower case');
const unixSeconds = z.number().int().positive();

/**
 * Any JSON object, checked without copying it: a loose zod object copies every unknown key into a
 * new object, which for a large `data.object` (an unlisted type with thousands of fields) costs more
 * event loop than parsing it. Each handled type's schema reads its object afterwards.
 */
const anyObject = z.custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'Invalid input: expected object');

/** Stripe's own limit on metadata: 50 keys (https://docs.stripe.com/metadata). */
export const MAX_METADATA_KEYS = 50;

/**
 * Metadata: at most 50 string values, checked without copying (a zod record validates and copies
 * every entry, so thousands of them in a signed 256 KiB body would cost the event loop for nothing).
 */
const metadataSchema = z.custom<Record<string, string>>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length <= MAX_METADATA_KEYS &&
    Object.values(value).every((entry) => typeof entry === 'string'),
  `Invalid input: expected an object of at most ${MAX_METADATA_KEYS} string values`,
);

export const envelopeSchema = z.looseObject({
  id,
  type: z.string().min(1),
  created: unixSeconds,
  /** True for live-mode events; compared with the mode of the configured API key. */
  livemode: z.boolean(),
  data: z.looseObject({ object: anyObject }),
});

export const productSchema = z.looseObject({
  id,
  name: z.string().min(1),
  description: z.string().nullable().optional(),
  images: z.array(z.string()).optional(),
  active: z.boolean(),
  metadata: metadataSchema.optional(),
  /** Unix seconds of the product's last change; absent in older API versions. */
  updated: unixSeconds.optional(),
});

export const priceSchema = z.looseObject({
  id,
  product: reference.transform(idOf),
  unit_amount: z.number().int().nonnegative().nullable(),
  currency,
  recurring: z.looseObject({ interval: z.enum(['day', 'week', 'month', 'year']) }).nullable().optional(),
  active: z.boolean(),
});

/** A deleted object: only its id (and, for a price, its product) is needed. */
export const deletedObjectSchema = z.looseObject({ id });

export const checkoutSessionSchema = z.looseObject({
  id,
  payment_status: z.enum(['paid', 'unpaid', 'no_payment_required']),
  customer: optionalReference,
  invoice: optionalReference.optional().transform((value) => value ?? null),
  subscription: optionalReference.optional().transform((value) => value ?? null),
  amount_total: z.number().int().nonnegative().nullable().optional(),
  currency: currency.nullable().optional(),
});

export type Envelope = z.infer<typeof envelopeSchema>;
export type ProductObject = z.infer<typeof productSchema>;
export type PriceObject = z.infer<typeof priceSchema>;
export type DeletedObject = z.infer<typeof deletedObjectSchema>;
export type CheckoutSessionObject = z.infer<typeof checkoutSessionSchema>;

/** A verified, validated event with its object in the shape of its type. */
export interface ValidEvent<T> {
  id: string;
  type: string;
  /** Unix seconds. */
  created: number;
  object: T;
}

/** `data.object.customer: Invalid input: expected string, received undefined`: the first problem, naming its field. */
function describeProblem(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid event';
  const path = [prefix, ...issue.path.map(String)].filter((part) => part !== '').join('.');
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}

/** The envelope of a parsed body (400 naming the field when it is not one). */
export function parseEnvelope(body: unknown): Envelope {
  const parsed = envelopeSchema.safeParse(body);
  if (!parsed.success) throw malformedEvent(describeProblem(parsed.error, ''));
  return parsed.data;
}

/** The event with its object validated against `schema` (400 naming the field otherwise). */
export function parseObject<T>(envelope: Envelope, schema: z.ZodType<T>): ValidEvent<T> {
  const parsed = schema.safeParse(envelope.data.object);
  if (!parsed.success) throw malformedEvent(describeProblem(parsed.error, 'data.object'));
  return { id: envelope.id, type: envelope.type, created: envelope.created, object: parsed.data };
}
