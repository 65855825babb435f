import pg from 'pg';
import { withClient } from './postgresClient.ts';
import { eventually } from './processes.ts';

/**
 * What the CDC relay needs from a service database (docs/design.md#polling-or-cdc): a server with
 * wal_level=logical (scripts/postgres-logical-decoding.sh turns it on, once, with a restart) and a
 * publication of the outbox table. Debezium creates its replication slot itself; a slot is dropped
 * only here (dropReplicationSlot), never by deleting the connector.
 */

/** The server's wal_level: `logical` is what logical decoding needs. */
export function walLevel(url: string): Promise<string> {
  return withClient(
    url,
    async (client) => (await client.query<{ wal_level: string }>('show wal_level')).rows[0]?.wal_level ?? '',
  );
}

/** Why CDC cannot run on this server, or undefined when it can. */
export async function logicalDecodingUnavailable(url: string): Promise<string | undefined> {
  const level = await walLevel(url);
  if (level === 'logical') return undefined;
  return (
    `PostgreSQL runs with wal_level=${level}; the CDC relay needs wal_level=logical. ` +
    'Run `bash scripts/postgres-logical-decoding.sh` once (it restarts PostgreSQL).'
  );
}

/**
 * `create publication <name> for table outbox`, unless it exists. Says so on the terminal: a
 * publication is cheap while nothing reads it, but it is a change to the database.
 */
export async function ensureOutboxPublication(url: string, name: string, log = console.log): Promise<void> {
  await withClient(url, async (client) => {
    const { rowCount } = await client.query('select 1 from pg_publication where pubname = $1', [name]);
    if (rowCount) return;
    await client.query(`create publication ${pg.escapeIdentifier(name)} for table outbox`);
    log(`postgres: created publication ${name} for table outbox in database ${client.database}`);
  });
}

/**
 * The role the demo's connectors read the outbox as, instead of the superuser: login and
 * replication (its slot), select on `outbox` (the rows) and update of its `attempts` column (the
 * heartbeat's touch of the last row), nothing else (docs/production.md, "The connector's credentials
 * and Connect's REST API").
 * The password is the demo's, like the superuser's in docker-compose.yml.
 */
const CDC_CONNECTOR_ROLE = { name: 'outbox_cdc', password: 'outbox_cdc' } as const;

// Role creation racing another process's: the catalog's unique index, or the role found at create.
const DUPLICATE_OBJECT = '42710';
const UNIQUE_VIOLATION = '23505';

/**
 * Creates the connector's role unless it exists, grants it the outbox of the database `url` names
 * (as a user allowed to: the table's owner or a superuser), and returns `url` as that role.
 */
export async function ensureConnectorRole(url: string, role = CDC_CONNECTOR_ROLE): Promise<string> {
  const name = pg.escapeIdentifier(role.name);
  await withClient(url, async (client) => {
    try {
      await client.query(
        `create role ${name} with login replication password ${pg.escapeLiteral(role.password)}`,
      );
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== DUPLICATE_OBJECT && code !== UNIQUE_VIOLATION) throw err;
    }
    // The heartbeat's touch of the last row updates `attempts` only: the one column it may write.
    // A table-wide update right granted by an earlier version is taken back first.
    await client.query(`revoke update on outbox from ${name}`);
    await client.query(`grant select, update (attempts) on outbox to ${name}`);
  });
  const asRole = new URL(url);
  asRole.username = role.name;
  asRole.password = role.password;
  return asRole.toString();
}

export async function dropPublication(url: string, name: string): Promise<void> {
  await withClient(url, (client) => client.query(`drop publication if exists ${pg.escapeIdentifier(name)}`));
}

/** Whether a reader holds the slot now; undefined when there is no such slot. */
async function slotActive(client: pg.Client, slot: string): Promise<boolean | undefined> {
  const sql = 'select active from pg_replication_slots where slot_name = $1';
  return (await client.query<{ active: boolean }>(sql, [slot])).rows[0]?.active;
}

/**
 * Drops a replication slot once nobody reads it (a deleted connector's task lets go of it within
 * a few seconds). A slot nobody reads holds the WAL from its position on for ever, and a database
 * with a slot cannot be dropped. Resolves false if there was no such slot.
 */
export async function dropReplicationSlot(url: string, slot: string, timeoutMs = 30_000): Promise<boolean> {
  return withClient(url, async (client) => {
    const idle = await eventually(
      `replication slot ${slot} no longer in use`,
      async () => {
        const active = await slotActive(client, slot);
        return active === true ? undefined : { exists: active === false };
      },
      timeoutMs,
    );
    if (idle.exists) await client.query('select pg_drop_replication_slot($1)', [slot]);
    return idle.exists;
  });
}

/** Waits until the slot exists and a reader holds it: from then on every insert is streamed. */
export async function waitForActiveSlot(url: string, slot: string, timeoutMs = 60_000): Promise<void> {
  await withClient(url, (client) =>
    eventually(
      `replication slot ${slot} active`,
      async () => (await slotActive(client, slot)) || undefined,
      timeoutMs,
    ),
  );
}
