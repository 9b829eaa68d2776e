import { type CheckResult, type Severity, statusOf } from './findings.ts';

const HEADINGS: [Severity, string][] = [
  ['failure', 'Failures'],
  ['warning', 'Warnings'],
  ['note', 'Notes'],
];

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');
}

/**
 * The audit as a person reads it: one line per check (status, name, counts), then the details grouped by
 * severity, then the verdict.
 */
export function formatReport(
  checks: readonly CheckResult[],
  context: { scope: string; now: Date; head: string },
): string {
  const width = Math.max(...checks.map((c) => c.title.length));
  const lines = [
    `Audit of the event log (${context.scope}) at ${context.now.toISOString()}, read to checkpoint ${context.head || '(empty log)'}`,
    '',
    ...checks.map((c) => `${statusOf(c).padEnd(4)}  ${c.title.padEnd(width)}  ${c.summary}`),
  ];
  for (const [severity, heading] of HEADINGS) {
    const withAny = checks.filter((c) => c.findings.count(severity) > 0);
    if (withAny.length === 0) continue;
    lines.push('', `${heading}:`);
    for (const check of withAny) {
      for (const finding of check.findings.kept.filter((f) => f.severity === severity))
        lines.push(indent(`${check.title}: ${finding.message}`, '  ').replace(/^ {2}/, '  - '));
      const omitted = check.findings.omitted(severity);
      if (omitted > 0) lines.push(`  - ${check.title}: … and ${omitted} more`);
    }
  }
  const failed = checks.filter((c) => statusOf(c) === 'FAIL').map((c) => c.title);
  lines.push(
    '',
    failed.length === 0
      ? 'Result: PASS (no mismatch found)'
      : `Result: FAIL (${failed.length} of ${checks.length} checks failed: ${failed.join(', ')})`,
  );
  return `${lines.join('\n')}\n`;
}
