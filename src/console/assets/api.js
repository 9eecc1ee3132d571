// The operator API as the console calls it: the token is kept in this tab's sessionStorage and
// sent as a Bearer header, never in a URL.

const tokenKey = "sms-console.operator-token"

/** The token saved in this tab, or null. */
export const savedToken = () => sessionStorage.getItem(tokenKey)

/** Keeps the token for this tab only (it goes when the tab closes). */
export const saveToken = (token) => sessionStorage.setItem(tokenKey, token)

/** Forgets the token. */
export const forgetToken = () => sessionStorage.removeItem(tokenKey)

/** An answer of the API that is not a success, with the spec's error code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message)
    this.status = status
    this.code = code
  }
}

/**
 * A client of /admin/v1 with `token`; `onUnauthorized` is called when the token is refused.
 * `call(method, path, body?)` resolves with the JSON answer or rejects with an ApiError.
 */
export const operatorApi = (token, onUnauthorized) => async (method, path, body) => {
  const headers = { authorization: `Bearer ${token}`, accept: "application/json" }
  if (body !== undefined) headers["content-type"] = "application/json"
  let res
  try {
    res = await fetch(`/admin/v1${path}`, {
      method,
      headers,
      cache: "no-store",
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  } catch {
    throw new ApiError(0, "network_error", "The service cannot be reached")
  }
  const answer = await res.json().catch(() => undefined)
  if (res.ok) return answer
  if (res.status === 401) onUnauthorized()
  throw new ApiError(res.status, answer?.error?.code ?? "http_error", answer?.error?.message ?? `HTTP ${res.status}`)
}

/** A path segment, encoded. */
export const seg = (value) => encodeURIComponent(value)
