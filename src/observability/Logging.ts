/**
 * JSON log lines on stdout at the configured level, stamped with the real time. A last line of
 * defence masks anything that looks like a Malagasy mobile number, so a full phone number never
 * reaches the logs.
 */
import { Clock, Context, Layer, Logger, References } from "effect"
import type { LogLevelName } from "../config/Config.ts"
import { maskPhone } from "../domain/Phone.ts"

const phoneLike = /\+2613\d{8}/g

/** Replaces every phone number in a log line by its masked form. */
export const redactPhones = (line: string): string => line.replace(phoneLike, maskPhone)

const levels = { debug: "Debug", info: "Info", warn: "Warn", error: "Error" } as const

/**
 * Where the HTTP access log writes its lines (http/AccessLog.ts); none by default, so an app
 * built without loggingLayer (an in-process test) keeps quiet.
 */
export const AccessLogWriter = Context.Reference<((line: string) => void) | undefined>("sms/AccessLogWriter", {
  defaultValue: () => undefined
})

const realClock = Clock.Clock.defaultValue()

/**
 * The real time (ms) for a log line. Effect's logger stamps a line with the fiber's clock, which
 * under SMS_CLOCK=test is the service's test clock (standing still, or days ahead): an operator
 * reads logs against the wall clock.
 */
export const logTimeMillis = (): number => realClock.currentTimeMillisUnsafe()

/** `logger` with every line stamped at the real time. */
const inRealTime = <Output>(logger: Logger.Logger<unknown, Output>) =>
  Logger.make<unknown, Output>((options) => logger.log({ ...options, date: new Date(logTimeMillis()) }))

const stdout = (line: string) => {
  process.stdout.write(line)
}

/** Drops log lines below `level` (whatever logger writes them). */
export const minimumLogLevel = (level: LogLevelName) => Layer.succeed(References.MinimumLogLevel, levels[level])

/** The service's logging: JSON lines on stdout from `level` up, the access log included. */
export const loggingLayer = (level: LogLevelName) =>
  Layer.mergeAll(
    Logger.layer([Logger.withConsoleLog(inRealTime(Logger.map(Logger.formatJson, redactPhones)))]),
    minimumLogLevel(level),
    Layer.succeed(AccessLogWriter, stdout)
  )
