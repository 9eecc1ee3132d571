/**
 * Entry point of `sms-admin` (run with Node >= 22.18, which strips the types; bin/sms-admin.mjs
 * makes sure of that): reads process.argv and the environment, runs, sets the exit status.
 */
import { run } from "./run.ts"

process.exitCode = await run(process.argv.slice(2), {
  env: process.env,
  fetch: (url, init) => fetch(url, init),
  stdout: (text) => {
    process.stdout.write(text)
  },
  stderr: (text) => {
    process.stderr.write(text)
  }
})
