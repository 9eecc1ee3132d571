/**
 * The schema, as numbered migrations, one file each (NNNN-name.ts), in order. Never edit one that
 * has shipped: add the next number.
 * Every tenant table carries `organisation_id` and its keys lead with it, so the data can be
 * distributed by organisation later without a rewrite.
 */
import type { Migration } from "./Migration.ts"
import { migration as m1 } from "./0001-organisations-keys-ledger-contacts.ts"
import { migration as m2 } from "./0002-messages-idempotency-secret.ts"
import { migration as m3 } from "./0003-batches.ts"
import { migration as m4 } from "./0004-inbox-simulator-leases.ts"
import { migration as m5 } from "./0005-operator-lookups.ts"
import { migration as m6 } from "./0006-accepted-index.ts"
import { migration as m7 } from "./0007-newest-first-indexes.ts"
import { migration as m8 } from "./0008-simulator-submission-counts.ts"
import { migration as m9 } from "./0009-receipts-by-message.ts"
import { migration as m10 } from "./0010-webhooks.ts"
import { migration as m11 } from "./0011-retention.ts"
import { migration as m12 } from "./0012-bind-slots.ts"
import { migration as m13 } from "./0013-fair-share-index.ts"
import { migration as m14 } from "./0014-timeline-in-row.ts"
import { migration as m15 } from "./0015-timelines-in-row-only.ts"
import { migration as m16 } from "./0016-ledger-partitions.ts"
import { migration as m17 } from "./0017-simulator-ref-unindexed.ts"
import { migration as m18 } from "./0018-message-partitions.ts"
import { migration as m19 } from "./0019-batch-text-once.ts"
import { migration as m20 } from "./0020-simulator-owed-receipts.ts"
import { migration as m21 } from "./0021-two-way-messages.ts"

export type { Migration } from "./Migration.ts"

export const migrations: ReadonlyArray<Migration> = [
  m1,
  m2,
  m3,
  m4,
  m5,
  m6,
  m7,
  m8,
  m9,
  m10,
  m11,
  m12,
  m13,
  m14,
  m15,
  m16,
  m17,
  m18,
  m19,
  m20,
  m21
]
