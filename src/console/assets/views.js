// The console's parts, each a function of what it shows and what it may ask for.
import { html } from "./html.js"

export const statuses = [
  "scheduled",
  "processing",
  "accepted",
  "delivered",
  "undeliverable",
  "blocked",
  "failed",
  "unknown"
]

/** An instant as `YYYY-MM-DD HH:MM:SS` (UTC, the service's clock), or a dash. */
export const formatTime = (iso) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}` : "—")

/** An instant as `MM-DD HH:MM:SS` (UTC) for narrow columns, the full instant in its tooltip. */
export const ShortTime = ({ iso }) =>
  iso ? html`<time datetime=${iso} title=${iso}>${iso.slice(5, 10)} ${iso.slice(11, 19)}</time>` : "—"

export const StatusBadge = ({ status }) => html`<span class="status status-${status}">${status}</span>`

/**
 * The clock, and under the test clock the control that advances it. The seconds typed are the
 * caller's state (`seconds`, `onSeconds`): each poll draws the bar again, which would otherwise
 * put the field back to its first value between typing and clicking.
 */
export const ClockBar = ({ clock, advancing, onAdvance, seconds, onSeconds }) => {
  if (clock === undefined) return html`<div class="clock">Clock…</div>`
  const submit = (event) => {
    event.preventDefault()
    if (Number(seconds) > 0) onAdvance(Number(seconds))
  }
  return html`<div class="clock">
    <span class="mode mode-${clock.mode}" title="SMS_CLOCK">${clock.mode} clock</span>
    <time id="clock-now" data-now=${clock.now} datetime=${clock.now}>${formatTime(clock.now)} UTC</time>
    ${
      clock.mode === "test" &&
      html`<form class="advance" onSubmit=${submit}>
        <label for="advance-seconds">Advance</label>
        <input id="advance-seconds" name="seconds" type="number" min="1" step="1" required
          value=${seconds} onInput=${(e) => onSeconds(e.currentTarget.value)} />
        <span>s</span>
        <button id="advance" type="submit" disabled=${advancing}>${advancing ? "Advancing…" : "Advance"}</button>
      </form>`
    }
  </div>`
}

const Credits = ({ balance }) =>
  balance === undefined
    ? html`<span class="muted">—</span>`
    : html`<span class="credits" title=${`total ${balance.total}, reserved ${balance.reserved}`}>
        <b>${balance.available}</b> available${balance.reserved > 0 ? html` · ${balance.reserved} reserved` : ""}
      </span>`

export const OrgList = ({ orgs, selectedId, selectedBalance, onSelect }) =>
  html`<nav class="orgs" aria-label="Organisations">
    <h2>Organisations</h2>
    ${orgs === undefined && html`<p class="muted">Loading…</p>`}
    ${orgs?.length === 0 && html`<p class="muted">None yet.</p>`}
    <ul>
      ${(orgs ?? []).map(
        (o) =>
          html`<li key=${o.id}>
          <button type="button" class=${o.id === selectedId ? "org selected" : "org"} data-org-id=${o.id}
            onClick=${() => onSelect(o.id)}>
            <span class="org-name">${o.name}</span>
            <${Credits} balance=${o.id === selectedId && selectedBalance !== undefined ? selectedBalance : o.balance} />
          </button>
        </li>`
      )}
    </ul>
  </nav>`

export const OrgHeader = ({ org }) =>
  html`<header class="org-header">
    <h1>${org.name}</h1>
    <span class="muted mono">${org.id}</span>
    ${!org.sms_enabled && html`<span class="status status-blocked">SMS disabled</span>`}
    <dl class="balance">
      <div><dt>Available</dt><dd data-balance="available">${org.balance.available}</dd></div>
      <div><dt>Reserved</dt><dd>${org.balance.reserved}</dd></div>
      <div><dt>Total</dt><dd>${org.balance.total}</dd></div>
      <div><dt>Valid until</dt><dd>${org.balance.valid_until ?? "no expiry"}</dd></div>
    </dl>
  </header>`

const ReceiptButtons = ({ message, busy, onReceipt }) =>
  message.status !== "accepted"
    ? null
    : html`<span class="receipt">
        ${["delivered", "undeliverable"].map(
          (outcome) =>
            html`<button type="button" class="small ${outcome}" data-receipt=${outcome} disabled=${busy}
            title=${`Make the simulator send a "${outcome}" receipt now`}
            onClick=${(e) => {
              e.stopPropagation()
              onReceipt(message.id, outcome)
            }}>${outcome}</button>`
        )}
      </span>`

export const MessagesTable = ({ page, filter, onFilter, selectedId, onSelect, busyId, onReceipt, paging }) =>
  html`<section class="panel messages" aria-label="Messages">
    <div class="panel-head">
      <h2>Messages</h2>
      <label class="filter">Status
        <select id="status-filter" value=${filter} onChange=${(e) => onFilter(e.currentTarget.value)}>
          <option value="">all</option>
          ${statuses.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      </label>
    </div>
    ${
      page === undefined
        ? html`<p class="muted">Loading…</p>`
        : page.results.length === 0
          ? html`<p class="muted">No message${filter ? ` is ${filter}` : " yet"}.</p>`
          : html`<div class="table-scroll"><table>
          <thead><tr><th>Created (UTC)</th><th>To</th><th>Status</th><th>Seg.</th><th>Delivery time</th><th>Send receipt</th></tr></thead>
          <tbody>
            ${page.results.map(
              (m) =>
                html`<tr key=${m.id} data-message-id=${m.id} data-status=${m.status}
                class=${m.id === selectedId ? "selected" : ""} onClick=${() => onSelect(m.id)}>
                <td class="mono"><${ShortTime} iso=${m.created_at} /></td>
                <td class="mono">${m.to || html`<span class="muted">erased</span>`}${m.batch_id && html` <span class="tag" title=${`batch ${m.batch_id}`}>batch</span>`}</td>
                <td><${StatusBadge} status=${m.status} /></td>
                <td class="num">${m.segments}</td>
                <td class="mono"><${ShortTime} iso=${m.delivery_time} /></td>
                <td><${ReceiptButtons} message=${m} busy=${busyId === m.id} onReceipt=${onReceipt} /></td>
              </tr>`
            )}
          </tbody>
        </table></div>`
    }
    <div class="pager">
      <button type="button" class="small" disabled=${!paging.hasNewer} onClick=${paging.newest}>Newest</button>
      <button type="button" class="small" disabled=${page?.next_cursor == null} onClick=${() => paging.older(page.next_cursor)}>Older</button>
    </div>
  </section>`

export const Timeline = ({ message, onClose }) =>
  html`<aside class="panel timeline" id="timeline" aria-label="Timeline">
    <div class="panel-head">
      <h2>Timeline</h2>
      <button type="button" class="small quiet" onClick=${onClose} aria-label="Close the timeline">×</button>
    </div>
    ${
      message === undefined
        ? html`<p class="muted">Loading…</p>`
        : html`<dl class="facts">
          <div><dt>Id</dt><dd class="mono">${message.id}</dd></div>
          <div><dt>To</dt><dd class="mono">${message.to || "erased"}</dd></div>
          <div><dt>Sender</dt><dd>${message.sender_name || "—"}</dd></div>
          <div><dt>Status</dt><dd><${StatusBadge} status=${message.status} /></dd></div>
          ${message.send_at && html`<div><dt>Send at</dt><dd class="mono">${formatTime(message.send_at)}</dd></div>`}
        </dl>
        <ol class="events">
          ${message.timeline.map(
            (t, i) =>
              html`<li key=${i} data-to-status=${t.to_status}>
              <div><${StatusBadge} status=${t.to_status} /> <span class="muted">by ${t.source}</span></div>
              <time class="mono muted">${formatTime(t.at)} UTC</time>
            </li>`
          )}
        </ol>`
    }
  </aside>`

const Counts = ({ counts }) =>
  html`<span class="counts">
    ${statuses
      .filter((s) => counts[s] > 0)
      .map((s) => html`<span class="status status-${s}" data-count=${s}>${s} ${counts[s]}</span>`)}
  </span>`

export const BatchesTable = ({ page }) =>
  html`<section class="panel batches" aria-label="Batches">
    <div class="panel-head"><h2>Batches</h2></div>
    ${
      page === undefined
        ? html`<p class="muted">Loading…</p>`
        : page.results.length === 0
          ? html`<p class="muted">No batch yet.</p>`
          : html`<table>
          <thead><tr><th>Created (UTC)</th><th>Send at (UTC)</th><th>Recipients</th><th>Credits</th><th>Counts</th></tr></thead>
          <tbody>
            ${page.results.map(
              (b) =>
                html`<tr key=${b.id} data-batch-id=${b.id}>
                <td class="mono">${formatTime(b.created_at)}</td>
                <td class="mono">${formatTime(b.send_at)}</td>
                <td class="num">${b.recipient_count}</td>
                <td class="num">${b.credits_reserved}</td>
                <td><${Counts} counts=${b.counts} /></td>
              </tr>`
            )}
          </tbody>
        </table>`
    }
  </section>`

/** How many of an endpoint's deliveries are shown, newest first. */
const deliveriesShown = 5

/** The organisation's webhook endpoints, each with its latest deliveries (state, attempts, last status) and why its URL is refused, if it is. */
export const WebhooksPanel = ({ endpoints }) =>
  html`<section class="panel webhooks" aria-label="Webhooks">
    <div class="panel-head"><h2>Webhooks</h2></div>
    ${
      endpoints === undefined
        ? html`<p class="muted">Loading…</p>`
        : endpoints.length === 0
          ? html`<p class="muted">No webhook endpoint.</p>`
          : endpoints.map(
              (w) =>
                html`<div key=${w.id} class="webhook" data-webhook-id=${w.id} data-enabled=${String(w.enabled)}>
          <p><span class="mono">${w.url}</span> <span class="muted">${w.enabled ? "enabled" : "disabled"}, ${w.events.length} event types</span></p>
          ${w.url_refused === null ? null : html`<p class="error" data-url-refused="true">${w.url_refused}</p>`}
          ${
            w.deliveries.length === 0
              ? html`<p class="muted">No delivery yet.</p>`
              : html`<table>
                <thead><tr><th>Created (UTC)</th><th>Event</th><th>State</th><th>Attempts</th><th>Last status</th><th>Next attempt (UTC)</th></tr></thead>
                <tbody>
                  ${w.deliveries.slice(0, deliveriesShown).map(
                    (d) =>
                      html`<tr key=${d.event_id} data-event-id=${d.event_id} data-state=${d.state}>
                      <td class="mono">${formatTime(d.created_at)}</td>
                      <td>${d.type}</td>
                      <td>${d.state}</td>
                      <td class="num">${d.attempts}</td>
                      <td class="num">${d.last_status_code ?? "-"}</td>
                      <td class="mono">${d.next_attempt_at === null ? "-" : formatTime(d.next_attempt_at)}</td>
                    </tr>`
                  )}
                </tbody>
              </table>`
          }
        </div>`
            )
    }
  </section>`
