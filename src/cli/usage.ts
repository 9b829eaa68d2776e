// What every invocation may need before any command's modules load: the usage text and the outcomes main.ts turns
// into output and exit codes. Nothing heavy may be imported here (`--help` and bad usage load this file alone).

export const USAGE = `Usage: npm run -s gateway -- <command> [--init]     (or: npx model-gateway <command>)

  accounts list                                      every account: name, balance, active keys, sub-accounts
  accounts show --account ID                         one account: settings, keys, balance (top-ups, charges)
  accounts create --name NAME                        open an account; prints {"account_id", "key", "key_id"}
  accounts update --account ID [--rate-limit-rpm N] [--rate-limit-tpm N|none] [--balance-low-cents N]
                  [--request-bodies keep|drop|default] [--request-retention-days N|default]
                  [--mcp-write-tools on|off] [--cache-default auto|force|semantic|skip]
                  [--byok-sub-accounts on|off] [--byok-fallback on|off]
                                                     the account's requests and tokens per minute (the tokens cap
                                                     its sub-accounts' own; none lifts it), where balance.low fires,
                                                     whether (and how long) its request bodies are kept, whether
                                                     its keys get the MCP server's write tools (docs/mcp.md), and
                                                     the cache mode of its requests that name none (docs/cache.md),
                                                     whether its sub-accounts may bring provider keys and a failing
                                                     own key falls back to the operator's pool (docs/providers.md)
  accounts routing --account ID [--allow P,P] [--exclude P,P]
                                                     the models the automatic router may choose for the account
                                                     (\`*\` wildcards); neither flag lifts the restriction
  keys list [--account ID] [--sub-account ID]       keys (name, prefix, created, expires, revoked), newest first;
                                                     an account's include its sub-accounts' keys
  keys create --account ID [--name NAME] [--expires-at T]
                                                     issue another main key (T: Unix seconds or ISO 8601 time)
  keys revoke --key-id ID                            revoke a key (a sub-account's too) at once, on every instance
  keys rotate --key-id ID [--grace-seconds N] [--expires-at T]
                                                     a new key in its place; the old one works N more seconds
  topup --account ID --cents N --reference REF       record a payment; the same REF credits once
  adjust --account ID --cents N --reason TEXT --reference REF [--reverses TOPUP_REF]
                                                     credit (N > 0) or debit (--cents=-N) the balance with a
                                                     reason; the same REF adjusts once; --reverses names the
                                                     top-up a debit gives back (docs/billing.md)
  webhooks set --account ID --url URL                where the account's lifecycle webhooks go (see docs/webhooks.md)
  webhooks clear --account ID                        stop the account's lifecycle webhooks
  webhooks show --account ID                         the endpoint and the latest deliveries, from the store
  credentials list [--provider P]                    each provider credential's weight and state (running gateway)
  credentials add --provider P --name N (--key-env VAR | --key K) [--weight W] [--rpm N] [--tpm N]
                  [--monthly-spend-cents N]          add a credential to the provider's pool, on every instance
                                                     and kept across restarts (needs GATEWAY_SECRETS_KEY)
  credentials set --provider P --name N [--weight W] [--rpm N|none] [--tpm N|none] [--monthly-spend-cents N|none]
                                                     change an added credential's weight or limits (none lifts one)
  credentials remove --provider P --name N           remove an added credential (the config file's: edit the file)
  credentials disable|enable --provider P --name N   take a credential out of rotation, or put it back (the
                                                     instance reached only)
  provider-keys reencrypt                            seal every provider key accounts brought, and every credential
                                                     added through the API, under the current GATEWAY_SECRETS_KEY
                                                     (after a rotation; docs/operations.md)
  reconcile --day YYYY-MM-DD [--provider P]          the providers' cost reports for that UTC day against the
                                                     ledger's pass-through, per credential and model; a rerun
                                                     with the same figures appends nothing (docs/billing.md)
  projections status                                 each read model's checkpoint and lag
  projections rebuild [NAME]                         replay the log into fresh tables and swap them in
  audit [--account ID]                               verify the log alone: revisions, ids, schemas, hash chains, read
                                                     models, holds, caps, balances; a report, exit 3 on a mismatch
  balance --account ID                               the balance now: cents, usd, topped up, charged
  balance --account ID --at ISO_TIME                 the balance as it stood at that instant, from the log
  usage --account ID [--month YYYY-MM]               the month's requests, cost and units: total, per sub-account,
                                                     per tag (this month by default)
  export --account ID --month YYYY-MM [--format csv] the month's charges for finance, one CSV line each
  requests show ID [--account ID]                    one logged request (by X-Request-Id), with its bodies when kept
  requests export --month YYYY-MM [--account ID]     the month's request log as JSON lines, oldest first

Talks to the gateway at GATEWAY_URL (default http://127.0.0.1:$PORT) with GATEWAY_ADMIN_TOKEN (or the token in
GATEWAY_DATA_DIR); when no gateway answers, works on the store directly (GATEWAY_DATA_DIR's embedded PostgreSQL,
or DATABASE_URL and GATEWAY_DB_SCHEMA). projections, audit, balance --at, export, requests and webhooks show always
work on the store directly, beside a running gateway too. Where it works is said on stderr ("gateway at …",
"store at …"); stdout carries the result alone (JSON, or the report or CSV named above).

A store that does not exist is an error (exit 1): the CLI creates one only with --init.
Exit codes: 0 done, 1 refused or failed (a JSON error on stderr), 2 bad usage, 3 an audit mismatch.`;

export class UsageError extends Error {}

/** `--help`: the usage on stdout, exit 0. */
export class HelpRequested extends Error {}

/** A result printed as it is rather than as JSON (a report, a CSV file), with the exit code it calls for. */
export class TextOutput {
  constructor(
    readonly text: string,
    readonly exitCode = 0,
  ) {}
}
