/**
 * Pages of lists shown newest first (organisations, an organisation's messages and batches).
 * Such a list is ordered by (created_at, id) descending (an organisation's messages by id alone,
 * which is made from the instant of their creation), so a page never repeats or skips a row
 * while others are created. Its cursor is the last row shown, `<created_at ISO>|<id>` in
 * base64url; the list's own query keeps a cursor to its scope (an organisation's rows).
 */
import { Effect } from "effect"
import { InvalidCursor } from "./Errors.ts"
import { isUuid } from "./Uuid.ts"

/** Where a row stands in a newest-first list. */
export interface ListPosition {
  readonly createdAt: Date
  readonly id: string
}

/** The cursor of the page after `row`. */
export const encodeListCursor = (row: ListPosition): string =>
  Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString("base64url")

/** The position a cursor continues after, or undefined when it is not a cursor of such a list. */
export const decodeListCursor = (cursor: string): ListPosition | undefined => {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|(.+)$/.exec(
    Buffer.from(cursor, "base64url").toString("utf8")
  )
  if (match === null || !isUuid(match[2]!)) return undefined
  const createdAt = new Date(match[1]!)
  return Number.isNaN(createdAt.getTime()) ? undefined : { createdAt, id: match[2]! }
}

/** One page of a newest-first list; `nextCursor` is undefined on the last page. */
export interface ListPage<Row> {
  readonly rows: ReadonlyArray<Row>
  readonly nextCursor: string | undefined
}

/** The page of `limit` rows out of `rows`, read with `limit + 1` so that one more tells whether a next page exists. */
export const pageOf = <Row extends ListPosition>(rows: ReadonlyArray<Row>, limit: number): ListPage<Row> => {
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return { rows: page, nextCursor: rows.length > limit && last !== undefined ? encodeListCursor(last) : undefined }
}

/** The position `cursor` continues after (undefined: the first page), or InvalidCursor. */
export const positionAfter = (cursor: string | undefined): Effect.Effect<ListPosition | undefined, InvalidCursor> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  const position = decodeListCursor(cursor)
  return position === undefined
    ? Effect.fail(
        InvalidCursor.withMessage(
          "The cursor is not a next_cursor of this list; use it unchanged or restart from the first page"
        )
      )
    : Effect.succeed(position)
}
