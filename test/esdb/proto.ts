// The generated modules are CommonJS whose exports Node cannot detect statically, so they are
// default-imported. They must be the client's own copies: the generated serializers check `instanceof`.
import featuresGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import features from '@eventstore/db-client/generated/serverfeatures_pb.js';
import type { UUID as UUIDMessage } from '@eventstore/db-client/generated/shared_pb.js';
import shared from '@eventstore/db-client/generated/shared_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streams from '@eventstore/db-client/generated/streams_pb.js';
import type { StoredEvent } from './store.ts';

export const { Empty, UUID, StreamIdentifier } = shared;
export const { ReadResp, AppendResp } = streams;
export const { SupportedMethods, SupportedMethod } = features;
export const { StreamsService } = streamsGrpc;
export const { ServerFeaturesService } = featuresGrpc;

export function streamName(identifier: { getStreamName_asU8(): Uint8Array } | undefined): string {
  return identifier ? Buffer.from(identifier.getStreamName_asU8()).toString('utf8') : '';
}

export function streamIdentifier(name: string): InstanceType<typeof StreamIdentifier> {
  return new StreamIdentifier().setStreamName(Buffer.from(name, 'utf8'));
}

export function parseUuid(uuid: UUIDMessage | undefined): string {
  if (!uuid) return '';
  const structured = uuid.getStructured();
  if (!structured) return uuid.getString().toLowerCase();
  const hex = [structured.getMostSignificantBits(), structured.getLeastSignificantBits()]
    .map((half) => BigInt.asUintN(64, BigInt(half)).toString(16).padStart(16, '0'))
    .join('');
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-');
}

function formatUuid(id: string, structured: boolean): UUIDMessage {
  const uuid = new UUID();
  if (!structured) return uuid.setString(id);
  const hex = id.replaceAll('-', '');
  const half = (from: number): string =>
    BigInt.asIntN(64, BigInt(`0x${hex.slice(from, from + 16)}`)).toString();
  return uuid.setStructured(
    new UUID.Structured().setMostSignificantBits(half(0)).setLeastSignificantBits(half(16)),
  );
}

export function eventResp(event: StoredEvent, structuredUuid: boolean): InstanceType<typeof ReadResp> {
  const position = event.position.toString();
  const recorded = new ReadResp.ReadEvent.RecordedEvent()
    .setId(formatUuid(event.id, structuredUuid))
    .setStreamIdentifier(streamIdentifier(event.streamId))
    .setStreamRevision(event.revision.toString())
    .setCommitPosition(position)
    .setPreparePosition(position)
    .setData(event.data)
    .setCustomMetadata(event.metadata);
  const metadata = recorded.getMetadataMap();
  metadata.set('type', event.type);
  metadata.set('content-type', event.contentType);
  metadata.set('created', event.created.toString());
  return new ReadResp().setEvent(new ReadResp.ReadEvent().setEvent(recorded).setCommitPosition(position));
}
