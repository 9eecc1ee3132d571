// The inbound view (docs/two-way.md): the viewed organisation's inbound messages and opt-out
// list, the operator's unrouted inbound messages, all kept live; and a form that makes the
// simulator send an inbound message now.
import { useEffect, useState } from "preact/hooks"
import { seg } from "./api.js"
import { html } from "./html.js"
import { InboundTable, OptOutsTable } from "./inbound-tables.js"
import { liveMs, usePolling } from "./poll.js"

/**
 * POST /admin/v1/simulator/inbound from three fields. The fields are not bound to state: each
 * poll draws the view again and must not put back what was typed.
 */
const SimulatorInboundForm = ({ call, onSent }) => {
  const [sending, setSending] = useState(false)
  const [outcome, setOutcome] = useState(undefined)
  const submit = async (event) => {
    event.preventDefault()
    const form = event.currentTarget
    const fields = new FormData(form)
    const mo = { from: fields.get("from").trim(), to: fields.get("to").trim(), text: fields.get("text") }
    setSending(true)
    try {
      await call("POST", "/simulator/inbound", mo)
      setOutcome({ sent: `From ${mo.from} to ${mo.to}: received.` })
      form.elements.text.value = ""
      onSent()
    } catch (e) {
      setOutcome({ error: e })
    } finally {
      setSending(false)
    }
  }
  return html`<section class="panel simulator-inbound" id="simulator-inbound" aria-label="Send an inbound message">
    <div class="panel-head"><h2>Send an inbound message</h2></div>
    <form class="mo-form" onSubmit=${submit}>
      <label>From <input id="inbound-from" name="from" required placeholder="+261340000123" autocomplete="off" /></label>
      <label>To <input id="inbound-to" name="to" required placeholder="number, short code or sender name" autocomplete="off" /></label>
      <label class="grow">Text <input id="inbound-text" name="text" required autocomplete="off" /></label>
      <button id="send-inbound" type="submit" disabled=${sending}>${sending ? "Sending…" : "Send"}</button>
    </form>
    <p class="muted">The simulator sends it now, as a mobile would; it is routed like any other (simulator only).</p>
    ${outcome?.sent && html`<p class="sent" role="status">${outcome.sent}</p>`}
    ${outcome?.error && html`<p class="error" role="alert"><b>${outcome.error.code}</b>: ${outcome.error.message}</p>`}
  </section>`
}

/** The inbound view of `org` (undefined: none chosen yet), with every organisation's unrouted messages. */
export const InboundView = ({ call, org, changes, onChange }) => {
  const orgId = org?.id
  const lists = usePolling(
    async () => {
      const [inbound, optOuts, unrouted] = await Promise.all([
        orgId === undefined ? undefined : call("GET", `/organizations/${seg(orgId)}/inbound-messages`),
        orgId === undefined ? undefined : call("GET", `/organizations/${seg(orgId)}/opt-outs`),
        call("GET", "/inbound-messages?routed=false")
      ])
      return { inbound, optOuts, unrouted }
    },
    liveMs,
    [orgId]
  )
  // after an action anywhere (an advance, an inbound message sent), read everything again at once
  useEffect(() => {
    if (changes > 0) lists.refresh()
  }, [changes])

  const data = lists.data
  return html`<div class="org-view inbound-view">
    ${org !== undefined && html`<header class="org-header"><h1>${org.name}</h1><span class="muted mono">${org.id}</span></header>`}
    ${lists.error && html`<p class="error">Cannot refresh: ${lists.error.message}</p>`}
    <${SimulatorInboundForm} call=${call} onSent=${onChange} />
    ${
      org !== undefined &&
      html`<div class="inbound-org">
        <${InboundTable} id="inbound-messages" label="Inbound messages" page=${data?.inbound}
          empty="No inbound message yet." withReply=${true} />
        <${OptOutsTable} page=${data?.optOuts} />
      </div>`
    }
    <${InboundTable} id="unrouted" label="Unrouted inbound messages (every organisation)" page=${data?.unrouted}
      empty="None: every inbound message went to an organisation." withReply=${false} />
  </div>`
}
