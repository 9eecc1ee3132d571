/** UUID syntax, checked before a value reaches SQL so a malformed id reads as "not found". */
export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const isUuid = (s: string): boolean => uuidPattern.test(s)
