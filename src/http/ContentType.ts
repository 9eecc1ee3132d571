/** Media-type checks shared by the edge and raw handlers. */

/** True for `application/json` (any parameters) or no Content-Type at all, which HttpApi reads as JSON. */
export const isJsonContentType = (header: string | undefined): boolean =>
  header === undefined || header.split(";")[0]!.trim().toLowerCase() === "application/json"

/** True when an `Accept` header admits a JSON answer (absent, `*\/*`, `application/*` or `application/json`). */
export const acceptsJson = (header: string | undefined): boolean => {
  if (header === undefined || header.trim() === "") return true
  return header.split(",").some((part) => {
    const [type, ...params] = part.split(";").map((s) => s.trim().toLowerCase())
    const refused = params.some((p) => /^q=0(\.0*)?$/.test(p))
    return !refused && (type === "*/*" || type === "application/*" || type === "application/json")
  })
}
