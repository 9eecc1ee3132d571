/**
 * The table of contacts, owned here (docs/integrators.md#contacts): one contact per (organisation, phone
 * number). One statement inserts or updates, so concurrent upserts of a number never create two
 * contacts.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import { now } from "../clock/Time.ts"
import type { ContactInput, ContactRecord } from "./Contact.ts"

/** The optional fields, in response order; only those present in a request change on update. */
const optionalFields = [
  "first_name",
  "company",
  "position",
  "address",
  "birthday",
  "home_email",
  "office_email",
  "list_name",
  "source",
  "status"
] as const

interface ContactRow {
  readonly id: string
  readonly inserted: boolean
  readonly phoneNumber: string
  readonly firstName: string | null
  readonly company: string | null
  readonly position: string | null
  readonly address: string | null
  readonly birthday: string | null
  readonly homeEmail: string | null
  readonly officeEmail: string | null
  readonly listName: string | null
  readonly source: string | null
  readonly status: string | null
}

const toRecord = (row: ContactRow): ContactRecord => ({
  id: Number(row.id),
  phone_number: row.phoneNumber,
  first_name: row.firstName,
  company: row.company,
  position: row.position,
  address: row.address,
  birthday: row.birthday,
  home_email: row.homeEmail,
  office_email: row.officeEmail,
  // list_name, source and status are not nullable in the spec: absent when never set
  ...(row.listName === null ? {} : { list_name: row.listName }),
  ...(row.source === null ? {} : { source: row.source }),
  ...(row.status === null ? {} : { status: BigInt(row.status) })
})

export class ContactStore extends Context.Service<
  ContactStore,
  {
    /** Creates the contact (created = true) or updates the fields present in `input`; `null` clears a field. */
    readonly upsert: (
      organisationId: string,
      input: ContactInput
    ) => Effect.Effect<{ readonly contact: ContactRecord; readonly created: boolean }, DatabaseUnavailable>
  }
>()("sms/ContactStore") {
  static readonly layer = Layer.effect(
    ContactStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return ContactStore.of({
        upsert: Effect.fn("ContactStore.upsert")(function* (organisationId, input) {
          const at = yield* now
          const present = optionalFields.filter((f) => f in input)
          const value = <K extends (typeof optionalFields)[number]>(k: K) => input[k] ?? null
          const status = value("status")
          const [row] = yield* fromDatabase(sql<ContactRow>`
          INSERT INTO contacts AS c (organisation_id, phone_number, first_name, company, position, address,
            birthday, home_email, office_email, list_name, source, status, created_at, updated_at)
          VALUES (${organisationId}, ${input.phone_number}, ${value("first_name")}, ${value("company")},
            ${value("position")}, ${value("address")}, ${value("birthday")}::date, ${value("home_email")},
            ${value("office_email")}, ${value("list_name")}, ${value("source")},
            ${status === null ? null : status.toString()}::bigint, ${at}, ${at})
          ON CONFLICT (organisation_id, phone_number) DO UPDATE SET
            first_name = CASE WHEN 'first_name' = ANY(${present}::text[]) THEN EXCLUDED.first_name ELSE c.first_name END,
            company = CASE WHEN 'company' = ANY(${present}::text[]) THEN EXCLUDED.company ELSE c.company END,
            position = CASE WHEN 'position' = ANY(${present}::text[]) THEN EXCLUDED.position ELSE c.position END,
            address = CASE WHEN 'address' = ANY(${present}::text[]) THEN EXCLUDED.address ELSE c.address END,
            birthday = CASE WHEN 'birthday' = ANY(${present}::text[]) THEN EXCLUDED.birthday ELSE c.birthday END,
            home_email = CASE WHEN 'home_email' = ANY(${present}::text[]) THEN EXCLUDED.home_email ELSE c.home_email END,
            office_email = CASE WHEN 'office_email' = ANY(${present}::text[]) THEN EXCLUDED.office_email ELSE c.office_email END,
            list_name = CASE WHEN 'list_name' = ANY(${present}::text[]) THEN EXCLUDED.list_name ELSE c.list_name END,
            source = CASE WHEN 'source' = ANY(${present}::text[]) THEN EXCLUDED.source ELSE c.source END,
            status = CASE WHEN 'status' = ANY(${present}::text[]) THEN EXCLUDED.status ELSE c.status END,
            updated_at = EXCLUDED.updated_at
          RETURNING id::text, (xmax = 0) AS inserted, phone_number, first_name, company, position, address,
            birthday::text, home_email, office_email, list_name, source, status::text`)
          return { contact: toRecord(row!), created: row!.inserted }
        })
      })
    })
  )
}
