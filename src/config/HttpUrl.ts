/** A base URL the service may be told (SMS_PUBLIC_URL, a OneAPI entry's URLs): http or https, without credentials, query or fragment. */
export const isBaseHttpUrl = (raw: string): boolean => {
  const url = URL.canParse(raw) ? new URL(raw) : undefined
  return (
    url !== undefined &&
    (url.protocol === "http:" || url.protocol === "https:") &&
    url.search === "" &&
    url.hash === "" &&
    url.username === "" &&
    url.password === ""
  )
}
