/**
 * A table of the events a projection has folded, for counters that must not count an event twice (a replay):
 * the counter's statement inserts the event id and moves only when the insert did.
 */
export const guardTable = (t: string) => `CREATE TABLE IF NOT EXISTS ${t} (event_id uuid PRIMARY KEY)`;
