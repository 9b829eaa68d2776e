/**
 * The UTC calendar periods a sub-account's spend cap renews in (`spend_cap_reset`): a day, an ISO week (Monday to
 * Sunday), a month; null is for life. Days are `YYYY-MM-DD`; a period is named by its first day.
 */
export type CapReset = 'daily' | 'weekly' | 'monthly' | null;

const DAY_MS = 86_400_000;

/** The UTC day of an instant. */
export function dayOf(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

const midnight = (day: string) => Date.parse(`${day}T00:00:00.000Z`);
const plusDays = (day: string, days: number) => dayOf(new Date(midnight(day) + days * DAY_MS));

/** The Monday of the ISO week the day is in. */
export function weekStart(day: string): string {
  const weekday = new Date(midnight(day)).getUTCDay();
  return plusDays(day, -((weekday + 6) % 7));
}

/** The first day of the period the day is in; null for a lifetime cap. */
export function periodStart(reset: CapReset, day: string): string | null {
  switch (reset) {
    case null:
      return null;
    case 'daily':
      return day;
    case 'weekly':
      return weekStart(day);
    case 'monthly':
      return `${day.slice(0, 7)}-01`;
    default: {
      const _exhaustive: never = reset;
      return _exhaustive;
    }
  }
}

/** When the period the day is in ends (the next one starts); null for a lifetime cap. */
export function periodEnd(reset: CapReset, day: string): Date | null {
  const start = periodStart(reset, day);
  if (start === null) return null;
  if (reset === 'daily') return new Date(midnight(start) + DAY_MS);
  if (reset === 'weekly') return new Date(midnight(start) + 7 * DAY_MS);
  const [year, month] = start.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month, 1));
}

/**
 * The first day of a month (`YYYY-MM`) whose spending the next month still needs: the days of its last ISO week
 * that runs on into the next month. Undefined when the month ends on a Sunday.
 */
export function firstCarriedDay(month: string): string | undefined {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  const next = dayOf(new Date(Date.UTC(year, mon, 1)));
  const start = weekStart(next);
  return start === next ? undefined : start;
}

/** Whether a day lies in the period that `today` is in (the day is never after today's period). */
export function inPeriod(reset: Exclude<CapReset, null>, day: string, today: string): boolean {
  const start = periodStart(reset, today) as string;
  const end = dayOf(periodEnd(reset, today) as Date);
  return day >= start && day < end;
}
