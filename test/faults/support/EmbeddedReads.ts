/**
 * Reading a service's embedded database (docs/operators.md#configuration: `SMS_DATA_DIR`, one
 * process at a time) in a fault test: while the service runs, through the operator API (its
 * messages' statuses, page by page); once it has stopped, with SQL, the data directory opened in
 * this process behind a loopback socket as the service opens it (src/db/Embedded.ts), so that the
 * checks read the same tables as on PostgreSQL.
 */
import { Effect } from "effect"
import { embeddedServer } from "../../../src/db/Embedded.ts"
import type { Served } from "../../support/ServedProcess.ts"

/** An organisation's message as the operator's list gives it. */
export interface ListedMessage {
  readonly id: string
  readonly toNumber: string
  readonly status: string
}

/** Every message of `orgId`, through `GET /admin/v1/organizations/{org_id}/messages`, page by page. */
export const messagesByApi = async (served: Served, orgId: string): Promise<Array<ListedMessage>> => {
  const messages: Array<ListedMessage> = []
  let cursor: string | null = null
  do {
    const page = await served.admin(
      "GET",
      `/organizations/${orgId}/messages?limit=100${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    )
    if (page.status !== 200) throw new Error(`listing messages: ${page.status} ${page.text}`)
    for (const m of page.body.results as ReadonlyArray<{ id: string; to: string; status: string }>)
      messages.push({ id: m.id, toNumber: m.to, status: m.status })
    cursor = page.body.next_cursor
  } while (cursor !== null)
  return messages
}

/** Runs `read` with a connection string to the embedded database of `dataDir` (no service may hold it), then closes it. */
export const readEmbedded = <A>(dataDir: string, read: (url: string) => Promise<A>): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(embeddedServer(dataDir), ({ host, port }) =>
        Effect.promise(() => read(`postgres://postgres@${host}:${port}/postgres`))
      )
    )
  )
