/**
 * The simulators' mobiles that answer (docs/two-way.md#simulators): `+261340000010` answers `OK`
 * and `+261340000011` answers `STOP`, to the sender a message came from, one receipt delay after
 * its delivery receipt. Both the in-process simulator and the SMSC simulator read this table; it
 * imports nothing, so that the standalone SMSC loads no database code with it.
 */
export const replyingNumbers: Readonly<Record<string, string>> = {
  "+261340000010": "OK",
  "+261340000011": "STOP"
}
