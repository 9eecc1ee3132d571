/**
 * Entry point of sms-admin (run with Node >= 22.18, which strips the types; bin/sms-admin.mjs
 * makes sure of that): the command line, the environment and fetch of this process; the exit
 * status is the run's.
 */
// the modules themselves, not the package's index: it loads every Node adapter (twice the start-up time)
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Exit, Runtime } from "effect"
import { FetchHttpClient } from "effect/http"
import { runCli } from "./run.ts"

NodeRuntime.runMain(runCli(process.argv.slice(2)).pipe(Effect.provide([NodeServices.layer, FetchHttpClient.layer])), {
  teardown: (exit, onExit) =>
    Exit.isSuccess(exit) && typeof exit.value === "number" ? onExit(exit.value) : Runtime.defaultTeardown(exit, onExit)
})
