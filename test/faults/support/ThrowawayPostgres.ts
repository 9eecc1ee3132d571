/**
 * A PostgreSQL server of the fault suite's own, which it may stop and kill freely (never the
 * machine's shared server): `initdb` into a temporary directory, started on a free loopback port
 * with its socket in that directory, trust authentication. Run as the `postgres` user when the
 * suite runs as root (initdb refuses root). `remove` stops it and deletes the directory; it also
 * runs when the test process exits, and a later start removes what a killed run left behind.
 * For failovers: a standby of a running server (`standbyOf`: pg_basebackup -R, streaming), its
 * promotion, and its WAL receiver stopped (a standby left behind); extra settings per server.
 */
import { execFile, execFileSync } from "node:child_process"
import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { freePort } from "../../support/ServiceProcess.ts"

const run = promisify(execFile)
const prefix = "sms-faults-pg-"

/** The newest PostgreSQL's binaries (/usr/lib/postgresql/<version>/bin), or PG_BIN. */
const binDir = (): string => {
  if (process.env.PG_BIN) return process.env.PG_BIN
  const root = "/usr/lib/postgresql"
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "pg_ctl"))) : []
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0]
  if (newest === undefined)
    throw new Error(`no PostgreSQL binaries under ${root} (set PG_BIN to the directory of initdb and pg_ctl)`)
  return join(root, newest, "bin")
}

const isRoot = process.getuid?.() === 0
/** The postgres user's uid and gid, when the binaries must run as that user. */
const postgresUser = (): { uid: number; gid: number } | undefined => {
  if (!isRoot) return undefined
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"]).toString().trim())
  return { uid: id("-u"), gid: id("-g") }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The direct children of `pid` (the postmaster's backends and auxiliary processes), from /proc. */
const childrenOf = (pid: number): Array<number> =>
  readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8")
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
        return ppid === pid ? [Number(d)] : []
      } catch {
        return []
      }
    })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Removes the directories of earlier runs whose test process is gone (stopping their server first). */
const removeLeftovers = () => {
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(prefix))) {
    const dir = join(tmpdir(), name)
    try {
      const owner = Number(readFileSync(join(dir, "owner.pid"), "utf8"))
      if (alive(owner)) continue
      const postmaster = Number(readFileSync(join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0])
      if (postmaster > 0 && alive(postmaster)) process.kill(postmaster, "SIGKILL")
    } catch {
      // no owner or no server: only the files are left
    }
    rmSync(dir, { recursive: true, force: true })
  }
}

export class ThrowawayPostgres {
  private removed = false
  private readonly onExit = () => this.removeNow()

  private readonly bin: string
  private readonly dir: string
  private readonly user: { uid: number; gid: number } | undefined
  /** The loopback port it listens on. */
  readonly port: number
  private readonly settings: Readonly<Record<string, string>>

  private constructor(
    bin: string,
    dir: string,
    user: { uid: number; gid: number } | undefined,
    port: number,
    settings: Readonly<Record<string, string>>
  ) {
    this.bin = bin
    this.dir = dir
    this.user = user
    this.port = port
    this.settings = settings
    process.once("exit", this.onExit)
  }

  /** A fresh temporary directory (its owner recorded, owned by the postgres user) and a server to be made in it. */
  private static async make(settings: Readonly<Record<string, string>>): Promise<ThrowawayPostgres> {
    const bin = binDir()
    removeLeftovers()
    const dir = mkdtempSync(join(tmpdir(), prefix))
    writeFileSync(join(dir, "owner.pid"), String(process.pid))
    const user = postgresUser()
    if (user !== undefined) chownSync(dir, user.uid, user.gid)
    return new ThrowawayPostgres(bin, dir, user, await freePort(), settings)
  }

  /** initdb in a fresh temporary directory and start the server on a free port, with `settings` (`-c name=value`) on top. */
  static async start(settings: Readonly<Record<string, string>> = {}): Promise<ThrowawayPostgres> {
    const pg = await ThrowawayPostgres.make(settings)
    await pg.exec("initdb", [
      "-D",
      pg.dataDir,
      "-U",
      "postgres",
      "-A",
      "trust",
      "-E",
      "UTF8",
      "--locale=C",
      "--no-sync",
      "--no-instructions"
    ])
    await pg.startServer()
    return pg
  }

  /**
   * A hot standby of `primary`, streaming from it: `pg_basebackup -R` (standby.signal and
   * primary_conninfo) into a fresh directory, started on a free port with `settings` on top. Its
   * `application_name` is `name`, for the primary's synchronous_standby_names.
   */
  static async standbyOf(
    primary: ThrowawayPostgres,
    name: string,
    settings: Readonly<Record<string, string>> = {}
  ): Promise<ThrowawayPostgres> {
    const pg = await ThrowawayPostgres.make({ cluster_name: name, ...settings })
    await pg.exec("pg_basebackup", [
      "-D",
      pg.dataDir,
      "-R",
      "-X",
      "stream",
      "-c",
      "fast",
      "--no-sync",
      "-h",
      "127.0.0.1",
      "-p",
      String(primary.port),
      "-U",
      "postgres",
      "-d",
      `application_name=${name}`
    ])
    await pg.startServer()
    return pg
  }

  private get dataDir(): string {
    return join(this.dir, "data")
  }

  /** Runs one of PostgreSQL's binaries, as the postgres user when we are root. */
  private exec(name: string, args: ReadonlyArray<string>) {
    const file = join(this.bin, name)
    return this.user === undefined
      ? run(file, [...args], { cwd: this.dir })
      : run("runuser", ["-u", "postgres", "--", file, ...args], { cwd: this.dir })
  }

  /** The connection string of its `postgres` database. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  /** The postmaster's pid while it runs. */
  get pid(): number | undefined {
    try {
      const pid = Number(readFileSync(join(this.dataDir, "postmaster.pid"), "utf8").split("\n")[0])
      return pid > 0 && alive(pid) ? pid : undefined
    } catch {
      return undefined
    }
  }

  private async startServer(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      "-c listen_addresses=127.0.0.1",
      `-c unix_socket_directories=${this.dir}`,
      // a process crash (what the suite causes) loses nothing without fsync; only a machine crash would
      "-c fsync=off",
      "-c max_connections=200",
      // pg_ctl hands the options to a shell: each value is quoted
      ...Object.entries(this.settings).map(([name, value]) => `-c ${name}='${value.replaceAll("'", "")}'`)
    ].join(" ")
    await this.exec("pg_ctl", [
      "-D",
      this.dataDir,
      "-l",
      join(this.dir, "server.log"),
      "-o",
      options,
      "-w",
      "-t",
      "60",
      "start"
    ])
  }

  /** `pg_ctl stop -m fast`: sessions are ended (57P01), then the server shuts down. */
  async stop(): Promise<void> {
    await this.exec("pg_ctl", ["-D", this.dataDir, "-m", "fast", "-w", "-t", "60", "stop"])
  }

  /**
   * `kill -9` of the postmaster; resolves once its backends, which die as soon as they notice,
   * are gone (those that have not within 30 s are killed too). The next start recovers from the WAL.
   */
  async kill9(): Promise<void> {
    const pid = this.pid
    if (pid === undefined) throw new Error("the throwaway PostgreSQL is not running")
    const children = childrenOf(pid)
    process.kill(pid, "SIGKILL")
    const deadline = Date.now() + 30_000
    while (children.some(alive) && Date.now() < deadline) await sleep(50)
    for (const child of children.filter(alive)) process.kill(child, "SIGKILL")
  }

  /** `pg_ctl promote`: a standby ends recovery; resolves once it takes writes. */
  async promote(): Promise<void> {
    await this.exec("pg_ctl", ["-D", this.dataDir, "-w", "-t", "60", "promote"])
  }

  /**
   * A standby stops receiving WAL (primary_conninfo emptied, configuration reloaded: its WAL
   * receiver ends and none starts again), as a standby cut off from its primary: what the
   * primary commits from then on, it never has.
   */
  async stopReceivingWal(): Promise<void> {
    appendFileSync(join(this.dataDir, "postgresql.auto.conf"), "primary_conninfo = ''\n")
    await this.exec("pg_ctl", ["-D", this.dataDir, "reload"])
  }

  /** Starts it again on the same port, after `stop` or `kill9`. */
  async start(): Promise<void> {
    await this.startServer()
  }

  /** The server's log, for a failure message. */
  log(): string {
    try {
      return readFileSync(join(this.dir, "server.log"), "utf8")
    } catch {
      return ""
    }
  }

  private removeNow(): void {
    if (this.removed) return
    this.removed = true
    process.removeListener("exit", this.onExit)
    const pid = this.pid
    if (pid !== undefined) {
      for (const child of childrenOf(pid)) process.kill(child, "SIGKILL")
      process.kill(pid, "SIGKILL")
    }
    rmSync(this.dir, { recursive: true, force: true })
  }

  /** Stops the server (immediately: nothing in it is kept) and deletes its directory. */
  async remove(): Promise<void> {
    if (this.removed) return
    if (this.pid !== undefined)
      await this.exec("pg_ctl", ["-D", this.dataDir, "-m", "immediate", "-w", "stop"]).catch(() => undefined)
    this.removeNow()
  }
}
