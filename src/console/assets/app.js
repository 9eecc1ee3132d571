// The simulator console: log in with the operator token, then watch an organisation's messages,
// timelines, batches, balance and webhook deliveries live, or its inbound messages and opt-outs
// with the unrouted ones; drive the test clock and make the simulator send receipts and inbound messages.
import { render } from "preact"
import { useEffect, useMemo, useState } from "preact/hooks"
import { forgetToken, operatorApi, saveToken, savedToken, seg } from "./api.js"
import { html } from "./html.js"
import { InboundView } from "./inbound-view.js"
import { liveMs, usePolling } from "./poll.js"
import { BatchesTable, ClockBar, MessagesTable, OrgHeader, OrgList, Timeline, WebhooksPanel } from "./views.js"

/** How often the organisation list (and each one's balance) is read again. */
const listMs = 10000
const messagesPerPage = 25

const Login = ({ refused, onToken }) => {
  const [error, setError] = useState(refused ? "The operator token was refused." : undefined)
  const [checking, setChecking] = useState(false)
  const submit = async (event) => {
    event.preventDefault()
    const token = new FormData(event.currentTarget).get("token").trim()
    setChecking(true)
    try {
      await operatorApi(token, () => {})("GET", "/clock")
      onToken(token)
    } catch (e) {
      setError(e.status === 401 ? "The operator token was refused." : e.message)
      setChecking(false)
    }
  }
  return html`<main class="login">
    <form onSubmit=${submit}>
      <h1>SMS simulator console</h1>
      <label for="token">Operator token</label>
      <input id="token" name="token" type="password" autocomplete="off" required autofocus />
      <p class="muted">The service's SMS_ADMIN_TOKEN. It stays in this tab and is sent only to this service.</p>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <button type="submit" disabled=${checking}>${checking ? "Checking…" : "Open the console"}</button>
    </form>
  </main>`
}

/** One organisation: its balance, messages (with a selected one's timeline), batches and webhook endpoints. */
const OrgView = ({ call, orgId, changes, onChange, onError, onBalance }) => {
  const [filter, setFilter] = useState("")
  const [cursors, setCursors] = useState([])
  const [selectedId, setSelectedId] = useState(undefined)
  const [busyId, setBusyId] = useState(undefined)
  const cursor = cursors[cursors.length - 1]

  const activity = usePolling(
    async () => {
      const query = new URLSearchParams({ limit: String(messagesPerPage) })
      if (filter) query.set("status", filter)
      if (cursor) query.set("cursor", cursor)
      const [org, messages, batches, webhooks] = await Promise.all([
        call("GET", `/organizations/${seg(orgId)}`),
        call("GET", `/organizations/${seg(orgId)}/messages?${query}`),
        call("GET", `/organizations/${seg(orgId)}/batches?limit=20`),
        call("GET", `/organizations/${seg(orgId)}/webhooks`)
      ])
      // at most 10 endpoints: each with the first page of its delivery log
      const endpoints = await Promise.all(
        webhooks.results.map(async (w) => ({
          ...w,
          deliveries: (await call("GET", `/organizations/${seg(orgId)}/webhooks/${seg(w.id)}/deliveries`)).results
        }))
      )
      return { org, messages, batches, endpoints }
    },
    liveMs,
    [orgId, filter, cursor]
  )

  const selected = usePolling(
    () =>
      selectedId === undefined
        ? Promise.resolve(undefined)
        : call("GET", `/organizations/${seg(orgId)}/messages/${seg(selectedId)}`),
    liveMs,
    [orgId, selectedId]
  )

  // after an action anywhere (an advance, a receipt), read everything again at once
  useEffect(() => {
    if (changes > 0) {
      activity.refresh()
      selected.refresh()
    }
  }, [changes])
  useEffect(() => onBalance(activity.data?.org.balance), [activity.data])

  const receipt = async (id, outcome) => {
    setBusyId(id)
    try {
      await call("POST", `/organizations/${seg(orgId)}/messages/${seg(id)}/receipt`, { outcome })
      setSelectedId(id)
      onChange()
    } catch (e) {
      onError(e)
    } finally {
      setBusyId(undefined)
    }
  }

  const data = activity.data
  const paging = {
    hasNewer: cursors.length > 0,
    newest: () => setCursors([]),
    older: (next) => setCursors([...cursors, next])
  }
  return html`<div class="org-view">
    ${data === undefined ? html`<p class="muted">Loading…</p>` : html`<${OrgHeader} org=${data.org} />`}
    ${activity.error && html`<p class="error">Cannot refresh: ${activity.error.message}</p>`}
    <div class=${selectedId === undefined ? "work" : "work with-timeline"}>
      <${MessagesTable} page=${data?.messages} filter=${filter}
        onFilter=${(f) => {
          setFilter(f)
          setCursors([])
        }}
        selectedId=${selectedId} onSelect=${setSelectedId} busyId=${busyId} onReceipt=${receipt} paging=${paging} />
      ${selectedId !== undefined && html`<${Timeline} message=${selected.data} onClose=${() => setSelectedId(undefined)} />`}
    </div>
    <${BatchesTable} page=${data?.batches} />
    <${WebhooksPanel} endpoints=${data?.endpoints} />
  </div>`
}

/** The two views of the content: what an organisation sends (activity) and what it receives (inbound). */
const views = [
  ["activity", "Messages"],
  ["inbound", "Inbound"]
]

const ViewTabs = ({ view, onView }) =>
  html`<div class="tabs" role="tablist" aria-label="View">
    ${views.map(
      ([name, label]) =>
        html`<button type="button" role="tab" id=${`view-${name}`} aria-selected=${String(view === name)}
          class=${view === name ? "tab selected" : "tab"} onClick=${() => onView(name)}>${label}</button>`
    )}
  </div>`

const Console = ({ token, onLogout }) => {
  const call = useMemo(() => operatorApi(token, () => onLogout(true)), [token])
  const [orgId, setOrgId] = useState(undefined)
  const [changes, setChanges] = useState(0)
  const [advancing, setAdvancing] = useState(false)
  const [advanceSeconds, setAdvanceSeconds] = useState("10")
  const [actionError, setActionError] = useState(undefined)
  const [balance, setBalance] = useState(undefined)
  const [view, setView] = useState("activity")
  const changed = () => setChanges((n) => n + 1)

  const clock = usePolling(() => call("GET", "/clock"), liveMs, [])
  const orgs = usePolling(
    async () => {
      const page = await call("GET", "/organizations")
      const details = await Promise.all(
        page.results.map((o) => call("GET", `/organizations/${seg(o.id)}`).catch(() => undefined))
      )
      return page.results.map((o, i) => ({ ...o, balance: details[i]?.balance }))
    },
    listMs,
    []
  )

  // the newest organisation is shown until another is chosen
  useEffect(() => {
    if (orgId === undefined && orgs.data?.length > 0) setOrgId(orgs.data[0].id)
  }, [orgs.data])
  useEffect(() => {
    if (changes > 0) clock.refresh()
  }, [changes])

  const advance = async (seconds) => {
    setAdvancing(true)
    try {
      await call("POST", "/clock/advance", { seconds })
      changed()
    } catch (e) {
      setActionError(e)
    } finally {
      setAdvancing(false)
    }
  }

  return html`<div class="layout">
    <header class="top">
      <span class="brand">SMS simulator console</span>
      <${ClockBar} clock=${clock.data} advancing=${advancing} onAdvance=${advance}
        seconds=${advanceSeconds} onSeconds=${setAdvanceSeconds} />
      <button type="button" class="small quiet" id="logout" onClick=${() => onLogout(false)}>Log out</button>
    </header>
    <${OrgList} orgs=${orgs.data} selectedId=${orgId} selectedBalance=${balance} onSelect=${(id) => {
      setBalance(undefined)
      setOrgId(id)
    }} />
    <main class="content">
      ${
        actionError &&
        html`<div class="banner" role="alert">
        <span class="error"><b>${actionError.code}</b>: ${actionError.message}</span>
        <button type="button" class="small quiet" onClick=${() => setActionError(undefined)}>Dismiss</button>
      </div>`
      }
      <${ViewTabs} view=${view} onView=${setView} />
      ${
        view === "inbound"
          ? html`<${InboundView} key=${orgId} call=${call} org=${orgs.data?.find((o) => o.id === orgId)}
            changes=${changes} onChange=${changed} />`
          : orgId === undefined
            ? html`<p class="muted">${orgs.data?.length === 0 ? "No organisation yet: create one with the operator API or sms-admin." : "Loading…"}</p>`
            : html`<${OrgView} key=${orgId} call=${call} orgId=${orgId} changes=${changes} onChange=${changed}
            onError=${setActionError} onBalance=${setBalance} />`
      }
    </main>
  </div>`
}

const App = () => {
  const [token, setToken] = useState(savedToken())
  const [refused, setRefused] = useState(false)
  if (token === null) {
    return html`<${Login} refused=${refused} onToken=${(t) => {
      saveToken(t)
      setRefused(false)
      setToken(t)
    }} />`
  }
  return html`<${Console} token=${token} onLogout=${(wasRefused) => {
    forgetToken()
    setRefused(wasRefused)
    setToken(null)
  }} />`
}

render(html`<${App} />`, document.getElementById("console"))
