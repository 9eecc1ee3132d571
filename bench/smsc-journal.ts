/**
 * `node bench/smsc-journal.ts [messages] [rounds]` (2000, 7): what the SMSC simulator's journal
 * costs. Each round sends a burst of `messages` submit_sm at once through one bound client to an
 * in-process simulator, in memory or with a data directory (alternately, so that both see the same
 * machine), and times it until every answer and every receipt came back (receipts answered with
 * status 0, so each message writes its three journal entries). Prints the median of each and the
 * ratio.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { Smsc } from "../simulator/smsc/Smsc.ts"
import { SmppClient } from "../test/simulator/SmppClient.ts"
import { percentile, round } from "./stats.ts"

const messages = Number(process.argv[2] ?? 2000)
const rounds = Number(process.argv[3] ?? 7)
const dir = mkdtempSync(join(tmpdir(), "smsc-journal-bench-"))

const burst = async (dataDir: string | undefined): Promise<number> => {
  const smsc = await Smsc.start({
    port: 0,
    receiptDelayMs: 0,
    receiptRetryMs: 600_000,
    ...(dataDir === undefined ? {} : { dataDir })
  })
  const client = await SmppClient.bound(smsc.port)
  const started = performance.now()
  await Promise.all(Array.from({ length: messages }, () => client.submit("+261340000001")))
  while (client.receipts.length < messages) await sleep(1)
  const ms = performance.now() - started
  client.close()
  await smsc.dispose()
  return ms
}

const times = { memory: [] as Array<number>, journal: [] as Array<number> }
try {
  await burst(undefined) // warm-up
  for (let i = 0; i < rounds; i++) {
    times.memory.push(await burst(undefined))
    times.journal.push(await burst(join(dir, String(i))))
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
const memory = percentile(times.memory, 0.5)
const journal = percentile(times.journal, 0.5)
process.stdout.write(
  [
    `| ${messages} submit_sm and their receipts, median of ${rounds} | ms | µs per message |`,
    "|---|---:|---:|",
    `| in memory | ${round(memory)} | ${round((memory * 1000) / messages)} |`,
    `| with a data directory | ${round(journal)} | ${round((journal * 1000) / messages)} |`,
    `| ratio | ${round(journal / memory, 2)} | |`,
    ""
  ].join("\n")
)
