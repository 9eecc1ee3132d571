/**
 * Rows and bytes of each table of the service's schema, from the catalog (`/metrics`): cheap at
 * any size, read from pg_class, never by counting. A partitioned table is reported as one, its
 * partitions summed. Rows are PostgreSQL's estimate (as of the last VACUUM or ANALYZE); bytes
 * are the table's with its indexes and TOAST (pg_total_relation_size).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { DatabaseUnavailable } from "./DatabaseUnavailable.ts"
import { fromDatabase } from "./Statements.ts"

export interface TableSize {
  readonly table: string
  readonly rows: number
  readonly bytes: number
}

export class TableSizes extends Context.Service<
  TableSizes,
  {
    /** Every table of the schema with its estimated rows and its bytes, by name. */
    readonly all: Effect.Effect<ReadonlyArray<TableSize>, DatabaseUnavailable>
  }
>()("sms/TableSizes") {
  static readonly layer = Layer.effect(
    TableSizes,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return TableSizes.of({
        // reltuples is -1 for a table never vacuumed nor analyzed: counted as 0
        all: fromDatabase(sql<TableSize>`SELECT coalesce(p.relname, c.relname)::text AS table,
          sum(greatest(c.reltuples, 0))::float8 AS rows, sum(pg_total_relation_size(c.oid))::float8 AS bytes
        FROM pg_class AS c
        JOIN pg_namespace AS n ON n.oid = c.relnamespace
        LEFT JOIN pg_inherits AS i ON i.inhrelid = c.oid
        LEFT JOIN pg_class AS p ON p.oid = i.inhparent
        WHERE n.nspname = current_schema() AND c.relkind = 'r'
        GROUP BY 1 ORDER BY 1`)
      })
    })
  )
}
