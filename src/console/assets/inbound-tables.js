// The inbound view's tables (docs/two-way.md): inbound messages, newest first, and an
// organisation's opt-out list; each a function of the page it shows.
import { html } from "./html.js"
import { ShortTime } from "./views.js"

/** A message id in a narrow column: its first block, the whole id in its tooltip. */
const ShortId = ({ id }) => (id === null ? "—" : html`<span class="mono" title=${id}>${id.slice(0, 8)}…</span>`)

/**
 * A page of inbound messages, newest first: `id` and `label` name the panel, `empty` is said
 * when there is none; `withReply` adds the message each one answers (only a routed one can).
 */
export const InboundTable = ({ id, label, page, empty, withReply }) =>
  html`<section class="panel inbound" id=${id} aria-label=${label}>
    <div class="panel-head"><h2>${label}</h2></div>
    ${
      page === undefined
        ? html`<p class="muted">Loading…</p>`
        : page.results.length === 0
          ? html`<p class="muted">${empty}</p>`
          : html`<div class="table-scroll"><table>
          <thead><tr>
            <th>Received (UTC)</th><th>From</th><th>To</th><th>Text</th><th>Keyword</th><th>Parts</th>
            ${withReply && html`<th>In reply to</th>`}
          </tr></thead>
          <tbody>
            ${page.results.map(
              (m) =>
                html`<tr key=${m.id} data-inbound-id=${m.id} data-from=${m.from} data-keyword=${m.keyword ?? ""}
                data-in-reply-to=${m.in_reply_to ?? ""}>
                <td class="mono"><${ShortTime} iso=${m.received_at} /></td>
                <td class="mono">${m.from || html`<span class="muted">erased</span>`}</td>
                <td class="mono">${m.to}</td>
                <td class="text" data-field="text">${m.text || html`<span class="muted">${m.from ? "(no text)" : "erased"}</span>`}</td>
                <td>${m.keyword === null ? "" : html`<span class="tag">${m.keyword}</span>`}</td>
                <td class="num">${m.segments}${m.incomplete ? html` <span class="tag incomplete" title="Parts were missing 10 minutes after the first">incomplete</span>` : ""}</td>
                ${withReply && html`<td><${ShortId} id=${m.in_reply_to} /></td>`}
              </tr>`
            )}
          </tbody>
        </table></div>`
    }
    ${page?.next_cursor != null && html`<p class="muted">The newest ${page.results.length} are shown.</p>`}
  </section>`

/** How each source opts a number out. */
const sourceTitles = {
  sms: "An SMS from the number (STOP…)",
  api: "The organisation's API (PUT /opt-outs/{phone_number}/)",
  operator: "The operator"
}

/** The organisation's opt-out list, newest first: each number, how it was opted out and when. */
export const OptOutsTable = ({ page }) =>
  html`<section class="panel opt-outs" id="opt-outs" aria-label="Opt-outs">
    <div class="panel-head"><h2>Opt-outs</h2></div>
    ${
      page === undefined
        ? html`<p class="muted">Loading…</p>`
        : page.results.length === 0
          ? html`<p class="muted">No number is opted out.</p>`
          : html`<div class="table-scroll"><table>
          <thead><tr><th>Phone number</th><th>Source</th><th>Since (UTC)</th></tr></thead>
          <tbody>
            ${page.results.map(
              (o) =>
                html`<tr key=${o.phone_number} data-phone-number=${o.phone_number} data-source=${o.source}>
                <td class="mono">${o.phone_number}</td>
                <td><span class="tag" title=${sourceTitles[o.source]}>${o.source}</span></td>
                <td class="mono"><${ShortTime} iso=${o.created_at} /></td>
              </tr>`
            )}
          </tbody>
        </table></div>`
    }
    ${page?.next_cursor != null && html`<p class="muted">The newest ${page.results.length} are shown.</p>`}
  </section>`
