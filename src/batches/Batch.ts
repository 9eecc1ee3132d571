/** A batch as the service shows it: its row and how many of its messages are in each status. */
import { MessageStatuses, type MessageStatus } from "../domain/MessageStatus.ts"
import type { BatchRow } from "./BatchStore.ts"

export type Counts = Record<MessageStatus, number>

/** A batch with how many of its messages are in each status. */
export interface BatchView extends BatchRow {
  readonly counts: Counts
}

/** Counts of a batch none of whose messages is in any status yet. */
export const zeroCounts = (): Counts => Object.fromEntries(MessageStatuses.map((s) => [s, 0])) as Counts
