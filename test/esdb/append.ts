import type {
  AppendReq,
  AppendResp as AppendRespMessage,
} from '@eventstore/db-client/generated/streams_pb.js';
import { Metadata, type ServerReadableStream, type sendUnaryData, status } from '@grpc/grpc-js';
import { AppendResp, Empty, parseUuid, streamName } from './proto.ts';
import type { AppendOutcome, EventLog, ExpectedRevision, ProposedEvent } from './store.ts';

type Call = ServerReadableStream<AppendReq, AppendRespMessage>;

export function appendHandler(log: EventLog) {
  return (call: Call, callback: sendUnaryData<AppendRespMessage>): void => {
    let options: AppendReq.Options | undefined;
    const proposed: ProposedEvent[] = [];
    let missingMetadata = false;

    call.on('data', (req: AppendReq) => {
      const message = req.getProposedMessage();
      if (req.hasOptions()) options = req.getOptions();
      if (!message) return;
      const metadata = message.getMetadataMap();
      const type = metadata.get('type');
      const contentType = metadata.get('content-type');
      if (type === undefined || contentType === undefined) missingMetadata = true;
      proposed.push({
        id: parseUuid(message.getId()),
        type: type ?? '',
        contentType: contentType === 'application/json' ? contentType : 'application/octet-stream',
        data: message.getData_asU8(),
        metadata: message.getCustomMetadata_asU8(),
      });
    });

    call.on('end', () => {
      if (!options) {
        callback({ code: status.INVALID_ARGUMENT, details: 'First append message must carry options' });
        return;
      }
      if (missingMetadata) {
        const metadata = new Metadata();
        metadata.set('exception', 'missing-required-metadata-property');
        metadata.set('required-metadata-properties', 'type,content-type');
        callback({ code: status.INVALID_ARGUMENT, details: 'Missing required metadata', metadata });
        return;
      }
      const expected = expectedRevision(options);
      const outcome = log.append(streamName(options.getStreamIdentifier()), expected, proposed);
      callback(null, toResponse(outcome, expected));
    });
  };
}

function expectedRevision(options: AppendReq.Options): ExpectedRevision {
  if (options.hasNoStream()) return 'no_stream';
  if (options.hasStreamExists()) return 'stream_exists';
  if (options.hasRevision()) return BigInt(options.getRevision());
  return 'any';
}

function toResponse(outcome: AppendOutcome, expected: ExpectedRevision): AppendRespMessage {
  if (outcome.ok) {
    const success = new AppendResp.Success();
    if (outcome.revision === undefined) success.setNoStream(new Empty());
    else success.setCurrentRevision(outcome.revision.toString());
    if (outcome.position === undefined) success.setNoPosition(new Empty());
    else {
      const position = outcome.position.toString();
      success.setPosition(new AppendResp.Position().setCommitPosition(position).setPreparePosition(position));
    }
    return new AppendResp().setSuccess(success);
  }
  const wrong = new AppendResp.WrongExpectedVersion();
  if (outcome.current === undefined) wrong.setCurrentNoStream(new Empty());
  else wrong.setCurrentRevision(outcome.current.toString());
  if (expected === 'any') wrong.setExpectedAny(new Empty());
  else if (expected === 'no_stream') wrong.setExpectedNoStream(new Empty());
  else if (expected === 'stream_exists') wrong.setExpectedStreamExists(new Empty());
  else wrong.setExpectedRevision(expected.toString());
  return new AppendResp().setWrongExpectedVersion(wrong);
}
