/**
 * The simulator's memory (`simulator_messages`): one row per message it was handed, refusals
 * included, with how many times it was handed it. A second submission of a message would be a
 * second SMS: the fault suite reads this count to show it never happens.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "@effect/vitest"
import { testNumbers } from "../../src/provider/simulator/Simulator.ts"
import { Provider } from "../../src/provider/Provider.ts"
import { backend, withApp } from "../support/TestApp.ts"

withApp({ config: { clock: "test" } })(`the simulator's table (${backend})`, (it) => {
  it.effect("counts every submission of a message, a rejected one included; an unreachable one never reached it", () =>
    Effect.gen(function*() {
      const organisationId = crypto.randomUUID()
      const submission = (to: string) => ({ organisationId, messageId: crypto.randomUUID(), to, senderName: "INFO", text: "hello", segments: 1 })
      const [twice, rejected, unreachable] = [submission("+261341234567"), submission(testNumbers.rejected), submission(testNumbers.unreachable)]
      const rows = yield* Effect.gen(function*() {
        const provider = yield* Provider
        const answers = [
          yield* provider.submit(twice),
          yield* provider.submit(twice),
          yield* provider.submit(rejected),
          yield* provider.submit(unreachable)
        ]
        expect(answers.map((a) => a._tag)).toEqual(["Accepted", "Accepted", "Rejected", "Unreachable"])
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ messageId: string; submissions: number; receipt: string }>`SELECT message_id::text, submissions, receipt
          FROM simulator_messages WHERE organisation_id = ${organisationId} ORDER BY submissions DESC`
      })
      expect(rows).toEqual([
        { messageId: twice.messageId, submissions: 2, receipt: "delivered" },
        { messageId: rejected.messageId, submissions: 1, receipt: "none" }
      ])
    }))
})
