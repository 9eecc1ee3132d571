/**
 * JSON log lines on stdout at the configured level. A last line of defence masks anything that
 * looks like a Malagasy mobile number, so a full phone number never reaches the logs.
 */
import { Context, Layer, Logger, References } from "effect"
import type { LogLevelName } from "./Config.ts"
import { maskPhone } from "./domain/Phone.ts"

const phoneLike = /\+2613\d{8}/g

/** Replaces every phone number in a log line by its masked form. */
export const redactPhones = (line: string): string => line.replace(phoneLike, maskPhone)

const levels = { debug: "Debug", info: "Info", warn: "Warn", error: "Error" } as const

/**
 * Where the HTTP access log writes its lines (http/AccessLog.ts); none by default, so an app
 * built without LoggingLive (an in-process test) keeps quiet.
 */
export const AccessLogWriter = Context.Reference<((line: string) => void) | undefined>("sms/AccessLogWriter", {
  defaultValue: () => undefined
})

const stdout = (line: string) => {
  process.stdout.write(line)
}

/** Drops log lines below `level` (whatever logger writes them). */
export const minimumLogLevel = (level: LogLevelName) => Layer.succeed(References.MinimumLogLevel, levels[level])

/** The service's logging: JSON lines on stdout from `level` up, the access log included. */
export const LoggingLive = (level: LogLevelName) =>
  Layer.mergeAll(
    Logger.layer([Logger.withConsoleLog(Logger.map(Logger.formatJson, redactPhones))]),
    minimumLogLevel(level),
    Layer.succeed(AccessLogWriter, stdout)
  )
