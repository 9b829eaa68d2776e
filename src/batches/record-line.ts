import type { z } from 'zod';
import type { BatchCommands } from '../../commands/batch/handler.ts';
import { DomainError } from '../../commands/errors.ts';
import type { BatchLineFinished } from '../../events/batch.ts';
import type { EventContext } from '../../events/index.ts';
import { storableText } from '../../events/storable.ts';
import { UnstorableEventError } from '../../events/store.ts';

type Line = z.infer<typeof BatchLineFinished>;

/** Waits before recording a line again after a failed append: a store that blinks loses no answer. */
const RETRY_DELAYS_MS = [100, 500, 2000];

/**
 * Records a finished line. Should the store refuse what the line holds (bodies are made storable first, see
 * `keptBody`, so this is a last resort), the line is recorded as failed with the reason and its cost, so it is
 * in the error file and its charge has its line. Another failure is retried a few times, then thrown: the caller
 * must then not finish the batch, and a later take records the charged line as `result_lost`.
 */
export async function recordLine(
  commands: BatchCommands,
  line: Line,
  context: () => EventContext,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await recordOrRefuse(commands, line, context());
    } catch (error) {
      const delay = RETRY_DELAYS_MS[attempt];
      if (delay === undefined || error instanceof DomainError) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

async function recordOrRefuse(commands: BatchCommands, line: Line, context: EventContext): Promise<void> {
  try {
    await commands.handle(line.batchId, { type: 'RecordLine', line }, context);
  } catch (error) {
    const refused =
      (error instanceof DomainError && error.kind === 'invalid') || error instanceof UnstorableEventError;
    if (!refused) throw error;
    const { bodyJson: _dropped, ...rest } = line;
    await commands.handle(
      line.batchId,
      {
        type: 'RecordLine',
        line: {
          ...rest,
          statusCode: 500,
          body: null,
          error: {
            code: 'result_not_recorded',
            message: storableText(
              `The response to this request could not be recorded (${error.message}); it was ${line.costNanos === '0' ? 'not charged' : 'charged'}.`,
            ),
          },
        },
      },
      context,
    );
  }
}
