/** Why a command was refused. Each kind maps to one HTTP status in src/http/errors.ts. */
export type DomainErrorKind = 'not_found' | 'conflict' | 'invalid';

export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    /** The request field the refusal is about, when there is one. */
    readonly field?: string,
  ) {
    super(message);
  }
}
