import { describe, expect, it } from 'vitest';
import {
  compareSchema,
  type DbCatalog,
  type DbColumn,
  type DbTable,
  parsePrismaSchema,
} from '../src/schemaDrift.ts';

// The comparer on hand-built catalogs: the mapping rules and the cases the apps' schemas do not
// exercise yet. The apps' test/schemaPrisma.matches-the-migrated-database.test.ts files check the real migrations end to end.

const header = 'datasource db {\n  provider = "postgresql"\n}\n';

function column(name: string, type: string, extra: Partial<DbColumn> = {}): DbColumn {
  return { name, type, notNull: true, default: null, identity: false, generated: false, ...extra };
}

function table(name: string, columns: DbColumn[], extra: Partial<DbTable> = {}): DbTable {
  return {
    name,
    columns,
    indexes: [
      {
        name: `${name}_pkey`,
        columns: [columns[0]?.name ?? 'id'],
        descending: [false],
        unique: true,
        primary: true,
        partial: false,
        method: 'btree',
      },
    ],
    foreignKeys: [],
    ...extra,
  };
}

function drift(schema: string, catalog: DbCatalog): string[] {
  return compareSchema(parsePrismaSchema(header + schema), catalog, { ignoreTables: ['outbox'] });
}

describe('compareSchema', () => {
  const schema = `
enum Colour {
  Red   @map("red")
  Green @map("green")
  @@map("colour")
}
model Thing {
  id        String    @id @default(uuid()) @db.Uuid
  seq       Int       @default(autoincrement())
  name      String    @db.VarChar(40)
  price     Decimal
  amount    Decimal   @db.Decimal(10, 2)
  ratio     Float?
  flags     String[]
  colour    Colour    @default(Red)
  status    String    @default("new")
  createdAt DateTime  @default(now()) @map("created_at") @db.Timestamptz(6)
  seenAt    DateTime? @map("seen_at")
  updatedAt DateTime  @updatedAt @map("updated_at")
  @@map("things")
}`;
  const things = () =>
    table('things', [
      column('id', 'uuid'),
      column('seq', 'integer', { default: "nextval('things_seq_seq'::regclass)" }),
      column('name', 'character varying(40)'),
      column('price', 'numeric(65,30)'),
      column('amount', 'numeric(10,2)'),
      column('ratio', 'double precision', { notNull: false }),
      column('flags', 'text[]', { notNull: false }),
      column('colour', 'colour', { default: "'red'::colour" }),
      column('status', 'text', { default: "'new'::text" }),
      column('created_at', 'timestamp with time zone', { default: 'now()' }),
      column('seen_at', 'timestamp(3) without time zone', { notNull: false }),
      column('updated_at', 'timestamp(3) without time zone'),
    ]);
  const catalog = (t: DbTable = things()): DbCatalog => ({
    tables: [t, table('outbox', [column('id', 'uuid')])],
    enums: [{ name: 'colour', values: ['red', 'green'] }],
  });

  it('accepts a database in step (client-side uuid() needs no column default, timestamptz == (6))', () => {
    expect(drift(schema, catalog())).toEqual([]);
  });

  it('reports type, nullability, default, enum and unmodelled differences', () => {
    const t = things();
    t.columns = t.columns.map((c) => {
      if (c.name === 'price') return { ...c, type: 'numeric' };
      if (c.name === 'seen_at') return { ...c, notNull: true };
      if (c.name === 'status') return { ...c, default: "'old'::text" };
      if (c.name === 'updated_at') return { ...c, default: 'now()' };
      return c;
    });
    const result = drift(schema, {
      tables: [t, table('extra', [column('id', 'integer')])],
      enums: [{ name: 'colour', values: ['red', 'blue'] }],
    });
    expect(result).toEqual([
      'things.price: schema.prisma says numeric(65,30) NOT NULL, database has numeric NOT NULL',
      'enum colour: schema.prisma says (red, green), database has (red, blue)',
      'things.status: schema.prisma says default "new", database has default \'old\'::text',
      'things.seen_at: schema.prisma says timestamp(3) without time zone NULL, database has timestamp(3) without time zone NOT NULL',
      'things.updated_at: schema.prisma says no default, database has default now()',
      'extra: schema.prisma has no model for it, database has table extra',
    ]);
  });

  it('checks uniques, indexes and relations, including explicit names and referential actions', () => {
    const relSchema = `
model Parent {
  id       Int     @id
  code     String  @unique
  children Child[]
  @@map("parents")
}
model Child {
  id       Int    @id
  parentId Int    @map("parent_id")
  a        Int
  b        Int
  parent   Parent @relation(fields: [parentId], references: [id], onDelete: Cascade)
  @@unique([a, b], map: "children_a_b_key")
  @@index([parentId], map: "children_parent_idx")
  @@map("children")
}`;
    const parents = table('parents', [column('id', 'integer'), column('code', 'text')]);
    const children = table('children', [
      column('id', 'integer'),
      column('parent_id', 'integer'),
      column('a', 'integer'),
      column('b', 'integer'),
    ]);
    children.indexes.push({
      name: 'children_ab',
      columns: ['b', 'a'],
      descending: [false, false],
      unique: true,
      primary: false,
      partial: false,
      method: 'btree',
    });
    children.foreignKeys.push({
      name: 'children_parent_id_fkey',
      columns: ['parent_id'],
      refTable: 'parents',
      refColumns: ['id'],
      onDelete: 'a',
      onUpdate: 'a',
    });
    expect(drift(relSchema, { tables: [parents, children], enums: [] })).toEqual([
      'parents (model Parent): schema.prisma says unique (code), database has no such unique constraint or index',
      'children (model Child): schema.prisma says unique (a, b) is named children_a_b_key, database names it children_ab',
      'children (model Child): schema.prisma says index children_parent_idx (parent_id) using btree, database has no such index',
      'children.parent_id: schema.prisma says onDelete: Cascade (Child.parent), database has NoAction on children_parent_id_fkey',
    ]);

    children.foreignKeys = [];
    expect(drift(relSchema, { tables: [parents, children], enums: [] })).toContain(
      'children.parent_id: schema.prisma says foreign key (parent_id) references parents (id) (Child.parent), database has no such foreign key',
    );
  });

  it('rejects an invalid schema with Prisma’s own message', () => {
    expect(() => parsePrismaSchema(`${header}model Broken {\n  id Nope @id\n}\n`)).toThrow(
      /Type "Nope" is neither/,
    );
  });
});
