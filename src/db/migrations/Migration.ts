/** One numbered migration: its statements run in order, in one transaction with the others pending. */
export interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}
