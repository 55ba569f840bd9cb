import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { asyncapiFindings, protoSubject, valuesFindings } from '../../scripts/release/contract-checks.js';
import { extractContracts, isContractFile, previousRelease } from '../../scripts/release/previous.js';
import { announcedNames, unannounced } from '../../scripts/release/upgrading.js';

const repoRoot = join(import.meta.dirname, '../..');
const scratch: string[] = [];

/** A copy of this tree's AsyncAPI document and charts, to change. */
function copyOfContracts(): string {
  const dir = mkdtempSync(join(tmpdir(), 'contracts-'));
  scratch.push(dir);
  cpSync(join(repoRoot, 'docs/asyncapi.yaml'), join(dir, 'docs/asyncapi.yaml'));
  cpSync(join(repoRoot, 'charts'), join(dir, 'charts'), { recursive: true, filter: (source) => !source.endsWith('.tgz') });
  return dir;
}

function edit(path: string, change: (text: string) => string): void {
  const before = readFileSync(path, 'utf8');
  const after = change(before);
  expect(after).not.toBe(before);
  writeFileSync(path, after);
}

afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the contract checks of the AsyncAPI document and the values schemas', () => {
  it('should find nothing between a tree and itself', () => {
    expect(asyncapiFindings(repoRoot, repoRoot)).toEqual([]);
    expect(valuesFindings(repoRoot, repoRoot)).toEqual([]);
  });

  it('should name an event removed and payload fields removed, retyped or made required', () => {
    const dir = copyOfContracts();
    edit(join(dir, 'docs/asyncapi.yaml'), (text) =>
      text
        .replace(/\n {4}ProviderProductCreatedEvent:\n {6}name: ProviderProductCreatedEvent[\s\S]*?(?=\n {4}SchemaPublishedEvent:)/, '')
        .replace("required: [phoneNumber, locale, userId, method]", 'required: [phoneNumber, locale, userId, method, role]')
        .replace('          amount: { type: integer,', '          amount: { type: string,')
        .replace("          paidAt: { type: string, format: date-time }\n", ''),
    );
    expect(asyncapiFindings(repoRoot, dir).map((finding) => finding.change)).toEqual([
      'docs/asyncapi.yaml: UserLoggedInEvent.role: made required',
      'docs/asyncapi.yaml: PaymentConfirmedEvent.amount: type integer → string',
      'docs/asyncapi.yaml: PaymentConfirmedEvent.paidAt: removed',
      'docs/asyncapi.yaml: ProviderProductCreatedEvent: the event was removed',
    ]);
  });

  it('should name a chart value removed or retyped by its path in the umbrella\'s values', () => {
    const dir = copyOfContracts();
    const auth = join(dir, 'charts/subscription-platform/charts/auth/values.schema.json');
    const schema = JSON.parse(readFileSync(auth, 'utf8')) as { properties: Record<string, { type?: unknown }> };
    delete schema.properties['replicaCount'];
    schema.properties['existingSecret'] = { ...schema.properties['existingSecret'], type: 'object' };
    writeFileSync(auth, JSON.stringify(schema));
    const subjects = valuesFindings(repoRoot, dir).map((finding) => finding.subject);
    expect(subjects).toEqual(expect.arrayContaining(['auth.replicaCount', 'auth.existingSecret']));
    expect(new Set(subjects).size).toBe(subjects.length);
  });

  it('should name buf\'s findings by field, RPC or message', () => {
    expect(protoSubject('Field "3" with name "ttl_ms" on message "CacheRequest" changed type from "int64" to "string".', 'cache/v1/cache.proto')).toBe('CacheRequest.ttl_ms');
    expect(protoSubject('Previously present RPC "Remove" on service "CacheGrpcService" was deleted.', 'cache/v1/cache.proto')).toBe('CacheGrpcService.Remove');
    expect(protoSubject('Previously present message "IncrementRequest" was deleted from file.', 'cache/v1/cache.proto')).toBe('IncrementRequest');
    expect(protoSubject('Previously present file "cache/v1/cache.proto" was deleted.', 'cache/v1/cache.proto')).toBe('cache/v1/cache.proto');
  });
});

describe('the Upgrading gate', () => {
  const changelog = `# Changelog

## [Unreleased]

### Added

- \`GET /sessions\` lists more (not an announcement: not under Upgrading).

### Upgrading

- \`CacheRequest.ttl_ms\` is a string now: upgrade the clients first.
- \`auth.replicaCount\` is gone; use \`auth.autoscaling\`.

## [1.0.0] - 2026-01-01

### Upgrading

- \`UserLoggedInEvent.role\` (an older release's entry).
`;

  it('should read only the backticked names of the Unreleased section\'s Upgrading group', () => {
    expect([...announcedNames(changelog)]).toEqual(['CacheRequest.ttl_ms', 'auth.replicaCount', 'auth.autoscaling']);
  });

  it('should let through only the changes an Upgrading entry names', () => {
    const findings = ['CacheRequest.ttl_ms', 'GET /sessions', 'UserLoggedInEvent.role', 'auth.replicaCount'].map((subject) => ({ contract: 'x', subject, change: subject }));
    expect(unannounced(findings, changelog).map((finding) => finding.subject)).toEqual(['GET /sessions', 'UserLoggedInEvent.role']);
  });
});

describe('the previous release', () => {
  it('should be a version and a full commit of this repository, whose contract files can be read', () => {
    const previous = previousRelease(repoRoot);
    expect(previous.version).toMatch(/^\d+\.\d+\.\d+/);
    const dir = mkdtempSync(join(tmpdir(), 'previous-'));
    scratch.push(dir);
    extractContracts(repoRoot, previous.commit, dir);
    expect(readFileSync(join(dir, 'proto/cache/v1/cache.proto'), 'utf8')).toContain('service CacheGrpcService');
    expect(readFileSync(join(dir, 'services/auth/openapi.yaml'), 'utf8')).toContain('openapi:');
    expect(isContractFile('charts/subscription-platform/charts/auth/values.schema.json')).toBe(true);
    expect(isContractFile('services/auth/src/main.ts')).toBe(false);
  });
});
