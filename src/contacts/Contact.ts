/**
 * A contact as the service keeps it (docs/integrators.md#contacts): identified by its phone number within the
 * organisation; an optional field absent from an update stays as it is, `null` clears it.
 * `status` is a 64-bit integer, kept exact as a bigint.
 */
export interface ContactInput {
  readonly phone_number: string
  readonly first_name?: string | null
  readonly company?: string | null
  readonly position?: string | null
  readonly address?: string | null
  readonly birthday?: string | null
  readonly home_email?: string | null
  readonly office_email?: string | null
  readonly list_name?: string
  readonly source?: string
  readonly status?: bigint
}

/** A stored contact. */
export type ContactRecord = { readonly id: number } & ContactInput
