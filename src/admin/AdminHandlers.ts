/** The operator API's handlers and its token check. */
import { Effect, Layer, Redacted } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { InvalidApiKey, MessageNotUnknown, NotFound, ValidationError } from "../domain/Errors.ts"
import { WorkSteps } from "../dispatch/WorkSteps.ts"
import { secretResponse } from "../http/Answers.ts"
import { balanceOf, messageOf } from "../http/Representations.ts"
import { Ledger } from "../ledger/Ledger.ts"
import { Messages } from "../messages/Messages.ts"
import { MessageStore } from "../messages/MessageStore.ts"
import { ApiKeys } from "../organisations/ApiKeys.ts"
import { type Organisation, Organisations } from "../organisations/Organisations.ts"
import { isValidSenderName } from "../domain/SenderName.ts"
import { today } from "../clock/Time.ts"
import { AdminApi, AdminAuth, listPageMax, Operator } from "./AdminApi.ts"
import { AdminToken } from "./AdminToken.ts"
import { withTimeline } from "./Timeline.ts"

export const defaultSenderName = "INFO"

/** An organisation as the operator API shows it (docs/operators.md#operator-api-and-cli). */
export const organisationBody = (o: Organisation) => ({
  id: o.id,
  name: o.name,
  sms_enabled: o.smsEnabled,
  default_sender_name: o.defaultSenderName,
  retention_days: o.retentionDays
})

export const adminAuthLayer = Layer.effect(
  AdminAuth,
  Effect.gen(function* () {
    const admin = yield* AdminToken
    return AdminAuth.of({
      adminToken: (httpEffect, { credential }) =>
        admin.matches(Redacted.value(credential))
          ? Effect.provideService(httpEffect, Operator, { authenticated: true })
          : Effect.fail(InvalidApiKey.withMessage("The operator API needs Authorization: Bearer <SMS_ADMIN_TOKEN>"))
    })
  })
)

export const AdminHandlers = HttpApiBuilder.group(
  AdminApi,
  "admin",
  Effect.fn(function* (handlers) {
    const organisations = yield* Organisations
    const keys = yield* ApiKeys
    const ledger = yield* Ledger
    const messages = yield* Messages
    const store = yield* MessageStore
    const steps = yield* WorkSteps

    const withBalance = (organisationId: string) =>
      Effect.gen(function* () {
        const org = yield* organisations.get(organisationId)
        const balance = yield* ledger.balance(org.id)
        return { ...organisationBody(org), balance: balanceOf(balance) }
      })

    return handlers
      .handle("createOrganisation", ({ payload }) =>
        organisations
          .create(payload.name, payload.default_sender_name ?? defaultSenderName)
          .pipe(Effect.map(organisationBody))
      )
      .handle("getOrganisation", ({ params }) => withBalance(params.org_id))
      .handle("updateOrganisation", ({ params, payload }) =>
        organisations
          .update(params.org_id, {
            ...(payload.sms_enabled === undefined ? {} : { smsEnabled: payload.sms_enabled }),
            ...(payload.default_sender_name === undefined ? {} : { defaultSenderName: payload.default_sender_name }),
            ...(payload.retention_days === undefined ? {} : { retentionDays: payload.retention_days })
          })
          .pipe(Effect.map(organisationBody))
      )
      .handle("createApiKey", ({ params, payload }) =>
        keys
          .issue(params.org_id, payload.permissions)
          .pipe(
            Effect.map((k) => secretResponse(201, { key_id: k.keyId, api_key: k.apiKey, permissions: k.permissions }))
          )
      )
      .handle("revokeApiKey", ({ params }) =>
        keys.revoke(params.key_id).pipe(Effect.as({ key_id: params.key_id, revoked: true as const }))
      )
      .handle("grantCredits", ({ params, payload }) =>
        Effect.gen(function* () {
          const validUntil = payload.valid_until ?? null
          if (validUntil !== null && validUntil < (yield* today)) {
            return yield* ValidationError.withMessage("Credits cannot be granted already expired", {
              details: [{ field: "valid_until", message: "must be today or later (UTC)" }]
            })
          }
          const org = yield* organisations.get(params.org_id)
          yield* ledger.grant(org.id, payload.amount, validUntil)
          return { balance: balanceOf(yield* ledger.balance(org.id)) }
        })
      )
      .handle("getMessage", ({ params }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          const message = yield* messages.get(org.id, params.message_id)
          if (message === undefined) return yield* NotFound.withMessage("No such message")
          return yield* withTimeline(store, message)
        })
      )
      .handle("findMessage", ({ params }) =>
        Effect.gen(function* () {
          const message = yield* store.findAnywhere(params.message_id)
          if (message === undefined) return yield* NotFound.withMessage("No such message")
          const { timeline, ...body } = yield* withTimeline(store, message)
          return { ...body, org_id: message.organisationId, timeline }
        })
      )
      .handle("listOrganisations", ({ query }) =>
        organisations.list(query.limit ?? listPageMax, query.cursor).pipe(
          Effect.map((page) => ({
            results: page.rows.map((o) => ({ ...organisationBody(o), created_at: o.createdAt.toISOString() })),
            next_cursor: page.nextCursor ?? null
          }))
        )
      )
      .handle("listApiKeys", ({ params }) =>
        keys.list(params.org_id).pipe(
          Effect.map((list) => ({
            results: list.map((k) => ({
              key_id: k.keyId,
              permissions: k.permissions,
              created_at: k.createdAt.toISOString(),
              revoked_at: k.revokedAt === null ? null : k.revokedAt.toISOString()
            }))
          }))
        )
      )
      .handle("listSenders", ({ params }) =>
        organisations.senders(params.org_id).pipe(Effect.map((senders) => ({ results: senders })))
      )
      .handle("eraseMessage", ({ params }) =>
        organisations.get(params.org_id).pipe(
          Effect.flatMap((org) => messages.erase(org.id, params.message_id)),
          Effect.map(messageOf)
        )
      )
      .handle("verifyMessage", ({ params }) =>
        Effect.gen(function* () {
          const org = yield* organisations.get(params.org_id)
          const message = yield* messages.get(org.id, params.message_id)
          if (message === undefined) return yield* NotFound.withMessage("No such message")
          if (!(yield* steps.verifyAgain(org.id, message.id))) {
            const status = (yield* messages.get(org.id, message.id))?.status ?? message.status
            return yield* MessageNotUnknown.withMessage(
              `Only an unknown message can be verified again; this one is ${status}`,
              { messageId: message.id }
            )
          }
          return yield* withTimeline(store, (yield* messages.get(org.id, message.id)) ?? message)
        })
      )
      .handle("setSender", ({ params, payload }) =>
        isValidSenderName(params.name)
          ? organisations.setSender(params.org_id, params.name, payload.active)
          : Effect.fail(
              ValidationError.withMessage("Invalid sender name", {
                details: [{ field: "name", message: "must be 1 to 11 ASCII letters, digits or internal spaces" }]
              })
            )
      )
  })
)
