/** The public v2 API (spec section 4) as HttpApi groups: the contract only, no implementation. */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { CommonErrors, InsufficientPermissions } from "../domain/Errors.ts"
import { Balance, Contact, ContactWrite } from "./Schemas.ts"
import { ApiKeyAuth, SchemaErrors } from "./Security.ts"

export const apiPrefix = "/api/sms/v2"

export class BalanceGroup extends HttpApiGroup.make("balance")
  .add(
    HttpApiEndpoint.get("get", "/balance/", {
      success: Balance,
      error: [...CommonErrors, InsufficientPermissions]
    }).annotate(OpenApi.Summary, "SMS credit balance (permission balance.read)")
  )
  .middleware(ApiKeyAuth)
  .prefix(apiPrefix)
{}

export class ContactsGroup extends HttpApiGroup.make("contacts")
  .add(
    HttpApiEndpoint.post("upsert", "/contacts/", {
      payload: ContactWrite,
      success: [Contact.pipe(HttpApiSchema.status(201)), Contact],
      error: [...CommonErrors, InsufficientPermissions]
    }).annotate(OpenApi.Summary, "Create (201) or update (200) the contact with this phone number (permission contacts.manage)")
  )
  .middleware(ApiKeyAuth)
  .prefix(apiPrefix)
{}

export class Api extends HttpApi.make("sms")
  .add(BalanceGroup)
  .add(ContactsGroup)
  .middleware(SchemaErrors)
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "SMS Integration Service",
    version: "2.0.2",
    description: "Organisation-scoped HTTP/JSON service for sending and scheduling SMS to Malagasy mobile numbers."
  }))
{}

