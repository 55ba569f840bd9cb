import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';

const realm = JSON.parse(readFileSync(new URL('./keycloak/realm.json', import.meta.url), 'utf8')) as {
  clients: Array<{ clientId: string; description?: string; name?: string }>;
};

// Keycloak imports realm.json into columns of 255 characters (CLIENT.DESCRIPTION, NAME): a longer
// value fails the whole seed with "Database operation failed", and with it every suite.
describe('the test realm file', () => {
  it.each(realm.clients.map((client) => [client.clientId, client] as const))('should fit client %s into Keycloak\'s columns', (_id, client) => {
    expect((client.description ?? '').length).toBeLessThanOrEqual(255);
    expect((client.name ?? '').length).toBeLessThanOrEqual(255);
  });
});
