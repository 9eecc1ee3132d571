/** Small assertions shared by the HTTP tests. */
import { expect } from "vitest"
import type { Reply } from "../support/TestApp.ts"

export const balancePath = "/api/sms/v2/balance/"
export const contactsPath = "/api/sms/v2/contacts/"

/**
 * Asserts a docs/integrators.md#errors error body with this status and code: the only top-level key is `error`,
 * whose keys are `code`, a non-empty English `message` and, optionally, `details`.
 * Returns `error` for further checks.
 */
export const expectError = (res: Reply, status: number, code: string) => {
  expect({ status: res.status, code: res.body?.error?.code }, res.text).toEqual({ status, code })
  expect(res.headers.get("content-type") ?? "").toMatch(/^application\/json/)
  expect(Object.keys(res.body)).toEqual(["error"])
  const error = res.body.error
  expect(typeof error.message).toBe("string")
  expect(error.message.trim().length).toBeGreaterThan(0)
  for (const key of Object.keys(error)) expect(["code", "message", "details"]).toContain(key)
  return error as { code: string; message: string; details?: Array<{ field: string; message: string }> }
}

/** Asserts exactly `{error: {code, message}}` (no details). */
export const expectPlainError = (res: Reply, status: number, code: string) => {
  const error = expectError(res, status, code)
  expect(Object.keys(error).sort()).toEqual(["code", "message"])
}

/** Asserts a 400 validation_error and returns the fields its details name (in order). */
export const expectValidation = (res: Reply): Array<string> => {
  const error = expectError(res, 400, "validation_error")
  expect(Array.isArray(error.details), res.text).toBe(true)
  for (const d of error.details!) {
    expect(Object.keys(d).sort()).toEqual(["field", "message"])
    expect(typeof d.field).toBe("string")
    expect(typeof d.message).toBe("string")
    expect(d.message.length).toBeGreaterThan(0)
  }
  return error.details!.map((d) => d.field)
}

/** The UTC calendar date `days` days from now, `YYYY-MM-DD`. */
export const utcDate = (days: number): string => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)
