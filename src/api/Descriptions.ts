/**
 * The words of the public OpenAPI document (served at /api/sms/v2/openapi.json and rendered at
 * /api/sms/v2/docs): what each operation does and, above all, when and how to retry it. The
 * README says the same for people reading the repository.
 */

const retryCreation = `**Retrying.** Retry *identically* (same path, same body, same \`Idempotency-Key\`) after a
timeout, a lost connection, a \`500\` or a \`503\` without \`message_id\`: the service recognises
the same operation and never sends twice. Space the retries and bound them. Never generate a
new key automatically: a new key is a new operation and can send a second SMS.

| answer | what to do |
|---|---|
| \`400\`, \`403 insufficient_permissions\`, \`403 sms_unavailable\` | fix the request or wait for the account to be fixed; nothing was created |
| \`409 idempotency_in_progress\` | the identical request is still running: retry identically, later |
| \`409 idempotency_conflict\` | the key was used with another body: do not change the key automatically, find out why |
| \`409 insufficient_credits\` | nothing was reserved: restore credits, then retry |
| \`503 service_unavailable\` | honour \`Retry-After\`, then retry identically |
| anything carrying \`message_id\` | read the message (\`GET /api/sms/v2/messages/{message_id}/\`): its status is the truth; a replay returns the same answer and sends nothing |`

const storedAnswers = `**Replays.** The same key with the same JSON body (key order and whitespace do not matter)
returns the first answer as it was given, with \`Idempotent-Replayed: true\`, even after the
message moved on. Stored: \`201\`, \`202\`, \`502 provider_rejected\`, \`502 provider_result_unknown\`,
\`503 dispatch_unavailable\` with \`message_id\`, \`403 sender_name_unavailable\` with \`message_id\`.
Everything else is not stored, so an identical retry runs again.`

/** The simulator's test numbers (the default provider): the outcome depends on the recipient alone. */
const simulatorNumbers = `**Test numbers** (the default provider is a deterministic simulator; any other number is
accepted, then delivered):

| recipient | immediate send answers | final status | credits |
|---|---|---|---|
| \`+261340000001\` | 201 | \`delivered\` | consumed |
| \`+261340000002\` | 201 | \`undeliverable\` | consumed |
| \`+261340000003\` | 502 \`provider_rejected\` | \`failed\` | released |
| \`+261340000004\` | 502 \`provider_result_unknown\` | \`unknown\`, verified as accepted, then \`delivered\` | reserved, then consumed |
| \`+261340000005\` | 503 \`dispatch_unavailable\` with \`message_id\` | \`failed\` | released |
| \`+261340000006\` | 201 | \`accepted\`, no receipt ever | consumed |
| \`+261340000007\` | 201, slowly (3 s by default) | \`delivered\` | consumed |
| \`+261340000008\` | 502 \`provider_result_unknown\` | \`unknown\`, verified as never received: \`failed\` | reserved, then released |
| \`+261340000009\` | 502 \`provider_result_unknown\` | \`unknown\` for good | stays reserved |

Scheduled messages and batch members meet the same outcomes at their send time.`

const readOnly = "Reading changes nothing: retry at will (after a `503`, honour `Retry-After`)."

/** The document's introduction: authentication, errors, headers, the rules every client needs. */
export const apiDescription = `Organisation-scoped service that sends SMS to Malagasy mobile numbers (\`+2613\` and 8 digits)
now or at a scheduled time, singly or in batches of up to 1000, tracks each message to its final
outcome, reports SMS credits (1 credit = 1 segment) and upserts contacts.

**Authentication.** Every call carries \`Authorization: Bearer svc_sms_<key_id>.<secret>\`. The
organisation is the key's; an \`X-Organization\` header is refused (\`400 invalid_organization_header\`).
Each operation names the permission it needs (\`403 insufficient_permissions\` without it).

**Errors** always have the body \`{"error": {"code", "message", "details"?}, "message_id"?}\`;
\`details\` names each bad field of a \`validation_error\`, and \`message_id\` is present whenever a
message exists for the failure. Every response carries \`X-Request-Id\` (yours when you send one of
1 to 64 visible ASCII characters): quote it when you report a problem; and
\`X-Content-Type-Options: nosniff\`.

**Acceptance is not delivery.** \`accepted\` means the provider took the message; \`delivered\` and
\`undeliverable\` come later from its receipt. Statuses: \`scheduled\`, \`processing\`, \`accepted\`,
\`delivered\`, \`undeliverable\`, \`blocked\`, \`failed\`, \`unknown\`; \`delivered\`, \`undeliverable\`,
\`failed\` and \`blocked\` are final. An \`unknown\` result is verified with the provider, never resent.

**Never resend with a new key** after \`provider_result_unknown\`, an \`unknown\` status or any lost
response: read the message instead. A \`500\` means sending may already have started: retry
identically a few times, then read the status if you have a \`message_id\`. A \`410
personal_data_erased\` means the message's data was erased on request: stop, and do not resend.

**Limits.** Text 1 to 320 characters and at most 2 segments (GSM-7: 160 septets in one segment,
153 per segment beyond, an extension character such as \`€\` counting two; any other character
makes it UCS-2: 70 units, then 67); sender name 1 to 11 ASCII
letters, digits or inner spaces; \`send_at\` an RFC 3339 time with an explicit offset, in the future and at most
9999-12-31T23:59:59Z in UTC;
1 to 1000 distinct recipients per batch; pages of 100; request bodies of at most 64 KiB (\`413
payload_too_large\`). No text field may contain NUL characters or unpaired UTF-16 surrogates.`

/** One description per operation, by group and endpoint identifier. */
export const operationDescriptions = {
  balance: `Credits of the key's organisation (permission \`balance.read\`). \`total\` = \`available\` + \`reserved\`;
\`reserved\` are credits held for messages whose provider result is not settled yet; \`available\`
counts only credits still valid today (UTC); \`valid_until\` is the earliest expiry among lots that
still have available credits (null when none expires). ${readOnly}`,

  contact: `Creates (\`201\`) or updates (\`200\`) the contact with this \`phone_number\` in the key's
organisation (permission \`contacts.manage\`). Absent optional fields stay as they were; \`null\`
clears a nullable one. \`status\` is kept as an exact 64-bit integer. An upsert is naturally
repeatable: after a timeout or a lost response, send the same body again.`,

  createMessage: `Sends one SMS now (no \`send_at\`, permission \`sms.send\`) or schedules it (\`send_at\`, permission
\`sms.schedule\`). Needs \`Idempotency-Key\` (1 to 128 visible ASCII characters; \`400
invalid_idempotency_key\` otherwise).

- Scheduled: \`202\` once the credits are reserved (atomically with the message).
- Now: the call waits for the provider. \`201\`: accepted (not yet delivered). \`502
  provider_rejected\`: refused, \`failed\`, credits released. \`502 provider_result_unknown\`: no
  answer, \`unknown\`, credits stay reserved while the service asks the provider; never resend with
  a new key. \`503 dispatch_unavailable\` with \`message_id\`: failed before reaching the provider,
  credits released.
- Both \`201\` and \`202\` carry \`Location\`, the message's URL.

${storedAnswers}

${retryCreation}

${simulatorNumbers}`,

  getMessage: `A message and its delivery outcome (permission \`delivery.read\`); a message of another organisation
is \`404\`. After any answer that carried a \`message_id\`, this is where the truth is. ${readOnly}`,

  createBatch: `Schedules one text to 1 to 1000 distinct recipients at one \`send_at\` (permission \`sms.schedule\`).
All or nothing: one invalid or repeated number, or too few credits, admits none. \`202\` means the
whole batch is admitted and its credits reserved, not that every message will be delivered; each
message then has its own outcome (see the batch and its messages). \`Location\` is the batch's URL.
Needs \`Idempotency-Key\`; a replay returns the original \`202\` body (counts as at admission) and
reschedules nothing.

${retryCreation}`,

  getBatch: `A batch with its current count of messages per status (permission \`delivery.read\`); counts
change as messages move on. ${readOnly}`,

  batchMessages: `The batch's messages in the order of the submitted recipients, 100 per page (permission
\`delivery.read\`). Pass \`next_cursor\` unchanged as \`cursor\` for the next page; it is \`null\` on the
last one. A cursor is opaque and belongs to its batch: a changed one, or one of another batch, is
\`400 invalid_cursor\` (restart from the first page). Statuses may change between pages. ${readOnly}`,

  createWebhook: `Creates a status webhook endpoint (permission \`webhooks.manage\`, at most 10 per organisation):
events are POSTed to \`url\`, signed as Standard Webhooks with the \`secret\` of this answer, the only
one that shows it. Needs \`Idempotency-Key\`; a replay returns the original \`201\` body.

${retryCreation}`,
  listWebhooks: `The organisation's webhook endpoints, newest first, never with their secret. ${readOnly}`,
  getWebhook: `A webhook endpoint, never with its secret; another organisation's is \`404\`. ${readOnly}`,
  updateWebhook: `Changes the fields given of a webhook endpoint; the others stay. Sending the same body again
changes nothing more: retry at will.`,
  deleteWebhook: `Deletes a webhook endpoint and drops its pending deliveries. Repeatable: a retry after a lost
answer finds it gone (\`404\`).`,
  rotateWebhookSecret: `A new secret for the endpoint; the previous one keeps signing beside it for 24 hours, so a
receiver can switch without losing events. Each call rotates again: retry only after checking that
the answer was lost.`,
  webhookDeliveries: `The endpoint's delivery log, newest first, 100 per page; pass \`next_cursor\` unchanged as
\`cursor\`. ${readOnly}`,
  retryWebhookDelivery: `Attempts a delivery again now, a failed one too (\`202\`). Repeatable: a retry makes it due
again, and the receiver may get the event once more (deliveries are at least once).`,
  testWebhook: `Sends a \`webhook.test\` event to the endpoint (\`202\`). Each call sends one more: retry only after
a lost answer, and expect a second event.`,
  listInboundMessages: `The organisation's inbound messages, newest first, 100 per page: pass \`next_cursor\` unchanged
as \`cursor\` for the next page. \`keyword\` is the keyword the message was routed by, or the consent word it
carried (\`STOP\`, \`START\`...); \`in_reply_to\` the organisation's message it answers, when it sent one to this
number under this sender within 30 days; \`incomplete\` marks a long message whose parts did not all arrive. ${readOnly}`,
  getInboundMessage: `One inbound message of the organisation; another organisation's answers 404. ${readOnly}`,
  listOptOuts: `Numbers opted out of the organisation's messages, newest first, 100 per page, with how (\`sms\`, \`api\`,
\`operator\`) and the inbound message that asked, if one did. ${readOnly}`,
  putOptOut: `Opts the number out of the organisation's messages (source \`api\`): 201 when it is opted out now, 200
when it already was (its first opt-out is kept). From then on \`POST /messages/\` to it answers 400 and a batch member
to it is created \`failed\` without a credit; a message already scheduled to it fails at its turn. Repeatable: send the
same request again after a lost answer (it answers 200).`,
  deleteOptOut: `Opts the number back in: 204; 404 \`not_found\` when it is not opted out. Repeatable: after a lost
answer, send the same request again (a 404 then means it is done).`
} as const

/** What each group of operations is about. */
export const tagDescriptions = {
  balance: "SMS credits of the key's organisation.",
  contacts: "Contacts of the key's organisation, identified by phone number.",
  messages: "Single SMS: send now, schedule, read the outcome.",
  "message-batches": "One text to many recipients at one scheduled time.",
  webhooks:
    "Status webhooks: signed, retried, durable pushes of message and batch outcomes (permission webhooks.manage).",
  "inbound-messages":
    "Messages mobiles send to the organisation's numbers: by a number dedicated to it, a keyword it holds on a shared number, or as a reply to the messages it sent (permission inbound.read).",
  "opt-outs":
    "Numbers that refused the organisation's messages (by SMS: STOP, ARRET, AJANONY...; or through this API). A message to one is refused; a batch member to one fails without a credit (permission contacts.manage)."
} as const
