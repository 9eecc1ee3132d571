/** An HTTP answer as stored for idempotent replay: status, JSON body, optional Location. */
export interface Answer {
  readonly status: number
  readonly body: unknown
  readonly location: string | null
}
