import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json } from 'node:stream/consumers';

/** A translation request as the fixture received it. */
export interface TranslationRequest {
  text: string;
  targetLocale: string;
}

/** How the fixture misbehaves: answer 500, or never answer (the client's timeout must fire). */
export type LocalizationFailureMode = 'http-500' | 'hang';

export interface LocalizationServiceFixture {
  /** Base URL, for LOCALIZATION_API_URL. */
  url: string;
  requests: TranslationRequest[];
  /**
   * Misbehave for these target locales (every locale when none are given) until `failWith(null)`;
   * calls add up, so different locales can fail differently. `failWith(null)` clears everything.
   */
  failWith(mode: LocalizationFailureMode | null, locales?: readonly string[]): void;
  reset(): void;
  close(): Promise<void>;
}

/** The fixture's deterministic "translation", so tests know what each locale must receive. */
export function fixtureTranslation(text: string, locale: string): string {
  return `[${locale}] ${text}`;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function isTranslationRequest(body: unknown): body is TranslationRequest {
  if (typeof body !== 'object' || body === null) return false;
  const { text, targetLocale } = body as Record<string, unknown>;
  return typeof text === 'string' && typeof targetLocale === 'string' && targetLocale !== '';
}

/**
 * A real HTTP server speaking the localization contract of the webhooks service
 * (services/webhooks/docs/localization-api.md): `POST /translate` with `{"text","targetLocale"}`
 * answers `200 {"text","locale"}`, `400` for a malformed request.
 */
export async function startLocalizationService(options: { port?: number } = {}): Promise<LocalizationServiceFixture> {
  const requests: TranslationRequest[] = [];
  let failAll: LocalizationFailureMode | undefined;
  const failByLocale = new Map<string, LocalizationFailureMode>();
  const hanging = new Set<ServerResponse>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST' || req.url !== '/translate') return sendJson(res, 404, { error: 'not found' });
    const body = await json(req).catch(() => undefined);
    if (!isTranslationRequest(body)) return sendJson(res, 400, { error: 'text and targetLocale are required' });
    requests.push({ text: body.text, targetLocale: body.targetLocale });
    const failing = failByLocale.get(body.targetLocale) ?? failAll;
    if (failing === 'hang') {
      hanging.add(res);
      res.once('close', () => hanging.delete(res));
      return;
    }
    if (failing === 'http-500') return sendJson(res, 500, { error: 'translation failed (injected)' });
    sendJson(res, 200, { text: fixtureTranslation(body.text, body.targetLocale), locale: body.targetLocale });
  };

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failWith(mode, locales) {
      if (mode === null) {
        failAll = undefined;
        failByLocale.clear();
      } else if (locales === undefined) {
        failAll = mode;
      } else {
        for (const locale of locales) failByLocale.set(locale, mode);
      }
    },
    reset() {
      requests.length = 0;
      failAll = undefined;
      failByLocale.clear();
    },
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
