/** An organisation as the operator API shows it (contract section 2). */
import type { Organisation } from "./Organisations.ts"

export const organisationBody = (o: Organisation) => ({
  id: o.id,
  name: o.name,
  sms_enabled: o.smsEnabled,
  default_sender_name: o.defaultSenderName
})
