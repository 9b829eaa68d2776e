import type { StoredEvent } from '../../events/envelope.ts';

export type Severity = 'failure' | 'warning' | 'note';

export interface Finding {
  severity: Severity;
  message: string;
}

/** Findings kept in detail per check and severity; a tampered log could otherwise print millions of lines. */
const KEPT_PER_SEVERITY = 50;

/** What one check found. Every finding is counted; only the first few of each severity are kept. */
export class Findings {
  readonly kept: Finding[] = [];
  private readonly counts: Record<Severity, number> = { failure: 0, warning: 0, note: 0 };

  fail(message: string): void {
    this.add('failure', message);
  }

  warn(message: string): void {
    this.add('warning', message);
  }

  note(message: string): void {
    this.add('note', message);
  }

  count(severity: Severity): number {
    return this.counts[severity];
  }

  /** How many of a severity were counted but not kept. */
  omitted(severity: Severity): number {
    return this.counts[severity] - this.kept.filter((f) => f.severity === severity).length;
  }

  private add(severity: Severity, message: string): void {
    this.counts[severity] += 1;
    if (this.counts[severity] <= KEPT_PER_SEVERITY) this.kept.push({ severity, message });
  }
}

export interface CheckResult {
  title: string;
  /** One line of counts, true whatever the outcome. */
  summary: string;
  findings: Findings;
}

export type Status = 'PASS' | 'WARN' | 'FAIL';

export function statusOf(check: CheckResult): Status {
  if (check.findings.count('failure') > 0) return 'FAIL';
  if (check.findings.count('warning') > 0) return 'WARN';
  return 'PASS';
}

/** Where an event sits, as findings name it: `stream@revision`. */
export function where(stored: Pick<StoredEvent, 'stream' | 'revision'>): string {
  return `${stored.stream}@${stored.revision}`;
}
