/**
 * The binds of the SMSC simulator: the status answering a `bind_transceiver` (refused on a
 * connection bound already, when told to refuse every bind, or for a wrong system_id or
 * password), and the binds of each account, now and the most ever at once (what stats.json holds).
 */
import type smpp from "smpp"
import { Status } from "../../src/provider/smpp/Statuses.ts"

/** The status answering the bind `pdu` on a connection `bound` already or not, for the account `systemId` / `password`. */
export const bindStatus = (
  pdu: smpp.PDU,
  bound: boolean,
  refuseBinds: boolean,
  account: { readonly systemId: string; readonly password: string }
): number =>
  bound
    ? Status.alreadyBound
    : refuseBinds
      ? Status.bindFailed
      : pdu.system_id !== account.systemId
        ? Status.invalidSystemId
        : pdu.password !== account.password
          ? Status.invalidPassword
          : Status.ok

/** Binds per account (system_id): bound now, and the most ever bound at once. */
export class Accounts {
  private readonly accounts = new Map<string, { now: number; max: number }>()

  /** One bind more for `systemId`; returns how many it has now. */
  bound(systemId: string): number {
    const account = this.accounts.get(systemId) ?? { now: 0, max: 0 }
    account.now++
    account.max = Math.max(account.max, account.now)
    this.accounts.set(systemId, account)
    return account.now
  }

  /** A bound connection of `systemId` ends (unbind, close, or the peer gone): one bind fewer. */
  unbound(systemId: string): void {
    const account = this.accounts.get(systemId)
    if (account !== undefined) account.now--
  }

  /** Each account's binds now and the most ever at once. */
  get counts(): Record<string, { now: number; max: number }> {
    return Object.fromEntries([...this.accounts].map(([id, a]) => [id, { now: a.now, max: a.max }]))
  }
}
