import { createRequire } from 'node:module';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import type * as descriptor from 'protobufjs/ext/descriptor/index.js';
import type { IDescriptorProto, IFileDescriptorProto } from 'protobufjs/ext/descriptor/index.js';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { cacheProtoPath, protoLoaderOptions } from '@sp/cache-client';

// protobufjs' descriptor module is CommonJS that replaces module.exports: require is its documented use.
const { FileDescriptorProto } = createRequire(import.meta.url)('protobufjs/ext/descriptor/index.js') as typeof descriptor;

/** `statuses` → `StatusesEntry`, `mapped_ids` → `MappedIdsEntry`: the entry name protoc gives a map field. */
const mapEntryName = (fieldName: string): string => fieldName.split('_').map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('') + 'Entry';

/**
 * protobufjs names a map field's entry type after the field without the `Entry` suffix, which
 * protoc-based clients reject ("incorrect implicit map entry name"; fullstorydev/grpcurl#519).
 * Renames each entry type, and the field's reference to it, as protoc would.
 */
function fixMapEntries(message: IDescriptorProto): void {
  for (const nested of message.nestedType ?? []) fixMapEntries(nested);
  for (const field of message.field ?? []) {
    const entry = message.nestedType?.find((nested) => nested.options?.mapEntry === true && nested.name === field.typeName);
    if (entry === undefined || field.name === undefined) continue;
    entry.name = mapEntryName(field.name);
    field.typeName = entry.name;
  }
}

function withProtocMapEntries(bytes: Buffer): Buffer {
  const file = FileDescriptorProto.decode(bytes) as IFileDescriptorProto;
  for (const message of file.messageType ?? []) fixMapEntries(message);
  return Buffer.from(FileDescriptorProto.encode(FileDescriptorProto.fromObject(file)).finish());
}

/**
 * What server reflection describes: the cache and health protos with their fields named as the
 * .proto files spell them, so clients that read reflection (grpcurl) accept `ttl_ms`. Field numbers
 * and types are those the service decodes with, so the wire is the same.
 */
export function reflectionPackageDefinition(): PackageDefinition {
  const definition = loadSync([cacheProtoPath, healthProtoPath], { ...protoLoaderOptions, keepCase: true });
  for (const entry of Object.values(definition)) {
    if ('fileDescriptorProtos' in entry && Array.isArray(entry.fileDescriptorProtos)) entry.fileDescriptorProtos = entry.fileDescriptorProtos.map(withProtocMapEntries);
  }
  return definition;
}
