import type { z } from 'zod';
import type { FileEvent, FileUploaded } from '../../events/file.ts';
import { DomainError } from '../errors.ts';

export interface FileState {
  fileId: string;
  exists: boolean;
  deleted: boolean;
  accountId: string;
  subAccountId: string | null;
}

export function initialState(): FileState {
  return { fileId: '', exists: false, deleted: false, accountId: '', subAccountId: null };
}

export function evolve(state: FileState, event: FileEvent): FileState {
  switch (event.type) {
    case 'FileUploaded':
      return {
        fileId: event.data.fileId,
        exists: true,
        deleted: false,
        accountId: event.data.accountId,
        subAccountId: event.data.subAccountId,
      };
    case 'FileDeleted':
      return { ...state, deleted: true };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

/** Who is asking: the account and, for a sub-account's key, the sub-account. */
export interface FileOwner {
  accountId: string;
  subAccountId: string | null;
}

export type FileCommand =
  | { type: 'RecordUpload'; file: z.infer<typeof FileUploaded> }
  | { type: 'DeleteFile'; owner: FileOwner };

export function decide(command: FileCommand, state: FileState): FileEvent[] {
  switch (command.type) {
    case 'RecordUpload':
      // A batch's output file has an id derived from the batch: recording it again (a retried finalization) is a no-op.
      if (state.exists) return [];
      return [{ type: 'FileUploaded', data: command.file }];
    case 'DeleteFile':
      if (!ownedBy(state, command.owner)) throw new DomainError('not_found', 'file not found', 'id');
      return [{ type: 'FileDeleted', data: { fileId: state.fileId, accountId: state.accountId } }];
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}

/** Another account's or sub-account's file, or a deleted one, is simply not found (never 403). */
export function ownedBy(state: FileState, owner: FileOwner): boolean {
  return (
    state.exists &&
    !state.deleted &&
    state.accountId === owner.accountId &&
    state.subAccountId === owner.subAccountId
  );
}
