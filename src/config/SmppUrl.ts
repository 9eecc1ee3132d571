/** `smpp://<system_id>:<password>@<host>:<port>`, the way an SMSC account is written in the configuration. */
import { Redacted } from "effect"
import type { SmscEndpoint } from "./SmppSettings.ts"

const defaultPort = 2775

/** The endpoint a URL names, or why it cannot be one (never echoing the URL, which holds a password). */
export const parseSmppUrl = (
  raw: string
): { readonly ok: true; readonly endpoint: SmscEndpoint } | { readonly ok: false; readonly why: string } => {
  const shape = "must be smpp://<system_id>:<password>@<host>:<port>"
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { ok: false, why: shape }
  }
  if (url.protocol !== "smpp:") return { ok: false, why: `${shape} (only the smpp scheme is supported)` }
  if (url.username === "") return { ok: false, why: `${shape} (the system_id is missing)` }
  if (url.hostname === "") return { ok: false, why: `${shape} (the host is missing)` }
  if ((url.pathname !== "" && url.pathname !== "/") || url.search !== "" || url.hash !== "") {
    return { ok: false, why: `${shape} (nothing may follow the port)` }
  }
  return {
    ok: true,
    endpoint: {
      // a bracketed IPv6 literal is connected to without its brackets
      host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port === "" ? defaultPort : Number(url.port),
      systemId: decodeURIComponent(url.username),
      password: Redacted.make(decodeURIComponent(url.password))
    }
  }
}
