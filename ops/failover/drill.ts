/**
 * The failover drill's load and faults (run by run.sh, which starts the cluster, HAProxy and
 * the service): creations at a steady rate, each under its own Idempotency-Key and to its own
 * number; after a warm-up, `patronictl switchover`; once writes are answered again and the
 * cluster has its synchronous standby back, kill -9 of the primary's postmaster. Then every key
 * that got no answer or a 503 is replayed until its answer is definite, and every creation
 * answered 201 or 202 is read back. Prints, per fault, the time to the first 2xx, the answers by
 * status during the gap and the lost acknowledged writes (docs/failover.md), as JSON and lines.
 *
 * Env: SERVICE_URL, SMS_ADMIN_TOKEN, PATRONI_CONFIG (a member's file, for patronictl),
 * FAILOVER_MEMBERS (`name=restUrl=dataDir,...`).
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"

const need = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is not set (run ops/failover/run.sh)`)
  return value
}
const base = need("SERVICE_URL")
const adminToken = need("SMS_ADMIN_TOKEN")
const patroniConfig = need("PATRONI_CONFIG")
const members = need("FAILOVER_MEMBERS")
  .split(",")
  .map((m) => {
    const [name, rest, dataDir] = m.split("=")
    return { name: name!, rest: rest!, dataDir: dataDir! }
  })

/** Creations a second; seconds of load before the first fault and after each recovery. */
const ratePerSecond = 30
const warmUpMs = 5_000
const settleMs = 5_000
/** Longest wait for writes to come back after a fault. */
const recoveryBoundMs = 60_000

/** Asynchronous: the load goes on, and its answers are timed, while patronictl runs. */
const runCommand = promisify(execFile)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))

interface Answer {
  readonly status: number | undefined
  // biome-ignore lint/suspicious/noExplicitAny: bodies are read field by field
  readonly body: any
}

const call = async (method: string, path: string, token: string, body?: unknown, key?: string): Promise<Answer> => {
  try {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(key === undefined ? {} : { "idempotency-key": key })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000)
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
  } catch {
    return { status: undefined, body: undefined }
  }
}

const admin = async (method: string, path: string, body?: unknown) => {
  const answer = await call(method, `/admin/v1${path}`, adminToken, body)
  if (answer.status === undefined || answer.status >= 300)
    throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`)
  return answer.body
}

interface Creation {
  readonly key: string
  readonly body: Readonly<Record<string, unknown>>
  readonly sentAt: number
  readonly answeredAt: number
  readonly answer: Answer
}

const isDefinite = (a: Answer) =>
  a.status !== undefined &&
  a.status !== 500 &&
  a.body?.error?.code !== "service_unavailable" &&
  a.body?.error?.code !== "idempotency_in_progress"
const isWrite = (c: Creation) => c.answer.status !== undefined && c.answer.status >= 200 && c.answer.status < 300

const main = async () => {
  const org = await admin("POST", "/organizations", { name: "Failover drill" })
  await admin("POST", `/organizations/${org.id}/credits`, { amount: 1_000_000 })
  const key = await admin("POST", `/organizations/${org.id}/api-keys`, {
    permissions: ["sms.send", "sms.schedule", "delivery.read", "balance.read"]
  })
  const apiKey: string = key.api_key
  const run = `drill-${Date.now()}`

  const creations: Array<Creation> = []
  let stopping = false
  const load = (async () => {
    const started = Date.now()
    const inFlight: Array<Promise<void>> = []
    for (let i = 0; !stopping; i++) {
      await sleep(started + (i * 1000) / ratePerSecond - Date.now())
      const to = `+26133${String(i).padStart(7, "0")}`
      const body: Record<string, unknown> =
        i % 4 === 3
          ? { to, text: "Failover drill, scheduled", send_at: new Date(Date.now() + 30_000).toISOString() }
          : { to, text: "Failover drill" }
      const sentAt = Date.now()
      inFlight.push(
        call("POST", "/api/sms/v2/messages/", apiKey, body, `${run}-${i}`).then((answer) => {
          creations.push({ key: `${run}-${i}`, body, sentAt, answeredAt: Date.now(), answer })
        })
      )
    }
    await Promise.all(inFlight)
  })()

  const primary = async (): Promise<(typeof members)[number]> => {
    for (;;) {
      for (const m of members) if ((await fetch(`${m.rest}/primary`).catch(() => undefined))?.status === 200) return m
      await sleep(200)
    }
  }
  const synchronousStandbyBack = async () => {
    const deadline = Date.now() + recoveryBoundMs
    while (Date.now() < deadline) {
      for (const m of members) if ((await fetch(`${m.rest}/sync`).catch(() => undefined))?.status === 200) return
      await sleep(250)
    }
    throw new Error("no synchronous standby came back")
  }

  /**
   * Runs `fault`, waits until a creation sent after it returned is answered 2xx, and `settleMs`
   * more; then finds the write gap: the longest stretch, from the fault on, with no creation
   * answered 2xx. Its end is the first 2xx after the fault; the answers that came within it say
   * what the clients saw meanwhile.
   */
  const measure = async (name: string, fault: () => Promise<string>) => {
    const at = Date.now()
    const what = await fault()
    const commandDoneAt = Date.now()
    const deadline = at + recoveryBoundMs
    while (!creations.some((c) => isWrite(c) && c.sentAt >= commandDoneAt)) {
      if (Date.now() > deadline) throw new Error(`${name}: no write answered within ${recoveryBoundMs / 1000} s`)
      await sleep(100)
    }
    await sleep(settleMs)
    const end = Date.now()
    const writes = creations
      .filter(isWrite)
      .map((c) => c.answeredAt)
      .filter((t) => t >= at && t <= end)
      .sort((x, y) => x - y)
    let [gapStart, gapEnd, previous] = [at, writes[0] ?? end, at]
    for (const t of writes) {
      if (t - previous > gapEnd - gapStart) [gapStart, gapEnd] = [previous, t]
      previous = t
    }
    const answers: Record<string, number> = {}
    for (const c of creations.filter((c) => c.answeredAt > gapStart && c.answeredAt <= gapEnd)) {
      const answer =
        c.answer.status === undefined ? "no answer" : `${c.answer.status} ${c.answer.body?.error?.code ?? ""}`.trim()
      answers[answer] = (answers[answer] ?? 0) + 1
    }
    const during = creations.filter((c) => c.answeredAt >= at && c.answeredAt <= end)
    return {
      fault: name,
      what,
      command_s: seconds(commandDoneAt - at),
      write_gap_s: seconds(gapEnd - gapStart),
      gap_began_after_fault_s: seconds(gapStart - at),
      first_2xx_after_fault_s: seconds(gapEnd - at),
      answers_during_gap: answers,
      slowest_answer_s: seconds(Math.max(0, ...during.map((c) => c.answeredAt - c.sentAt)))
    }
  }

  await sleep(warmUpMs)
  const switchover = await measure("patronictl switchover", async () => {
    const leader = await primary()
    const candidate = members.find((m) => m.name !== leader.name)!
    const { stdout } = await runCommand("patronictl", [
      ...["-c", patroniConfig, "switchover", "--leader", leader.name, "--candidate", candidate.name, "--force"]
    ])
    process.stdout.write(stdout)
    return `${leader.name} -> ${candidate.name}`
  })
  await synchronousStandbyBack()
  const crash = await measure("kill -9 of the primary's postgres", async () => {
    const leader = await primary()
    const postmaster = Number(readFileSync(join(leader.dataDir, "postmaster.pid"), "utf8").split("\n")[0])
    process.kill(postmaster, "SIGKILL")
    return `${leader.name} (postmaster ${postmaster})`
  })
  stopping = true
  await load

  // every key without a definite answer, replayed identically until it has one
  const undecided = creations.filter((c) => !isDefinite(c.answer))
  const replayed: Array<Answer> = []
  for (const c of undecided) {
    let answer = await call("POST", "/api/sms/v2/messages/", apiKey, c.body, c.key)
    for (let tries = 0; !isDefinite(answer) && tries < 120; tries++) {
      await sleep(500)
      answer = await call("POST", "/api/sms/v2/messages/", apiKey, c.body, c.key)
    }
    replayed.push(answer)
  }
  // every creation acknowledged, read back
  const acknowledged = creations.filter((c) => c.answer.status === 201 || c.answer.status === 202)
  const lost: Array<string> = []
  for (const c of acknowledged) {
    const read = await call("GET", `/api/sms/v2/messages/${c.answer.body.id}/`, apiKey)
    if (read.status !== 200) lost.push(`${c.key} ${c.answer.body.id}: ${read.status}`)
  }

  const figures = {
    date: new Date().toISOString(),
    rate_per_s: ratePerSecond,
    creations: creations.length,
    faults: [switchover, crash],
    answered_500: [...creations.map((c) => c.answer), ...replayed].filter((a) => a.status === 500).length,
    without_definite_answer_then_replayed: undecided.length,
    still_undecided_after_replay: replayed.filter((a) => !isDefinite(a)).length,
    acknowledged: acknowledged.length,
    lost_acknowledged_writes: lost.length
  }
  console.log(`[failover drill] ${JSON.stringify(figures)}`)
  for (const f of figures.faults) {
    console.log(
      `${f.fault} (${f.what}): no write answered for ${f.write_gap_s} s (from ${f.gap_began_after_fault_s} s after the fault; first 2xx ${f.first_2xx_after_fault_s} s after it), answers during the gap ${JSON.stringify(f.answers_during_gap)}, slowest answer ${f.slowest_answer_s} s`
    )
  }
  console.log(
    `creations ${figures.creations}, acknowledged ${figures.acknowledged}, lost acknowledged writes ${figures.lost_acknowledged_writes}, answered 500: ${figures.answered_500}, undecided after replay: ${figures.still_undecided_after_replay}`
  )
  if (lost.length > 0) console.log(`lost: ${lost.slice(0, 20).join("; ")}`)
  if (lost.length > 0 || figures.answered_500 > 0 || figures.still_undecided_after_replay > 0) process.exitCode = 1
}

const seconds = (ms: number) => Math.round(ms / 100) / 10

await main()
