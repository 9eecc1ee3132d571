import { Schema, SchemaIssue } from "effect"
import { MessageCreate, BatchCreate, WebhookCreate, ContactWriteInput } from "/work/wt-papercuts/src/api/Schemas.ts"
const dump = (i: any, d = 0): void => {
  const pad = " ".repeat(d * 2)
  const ast = i.ast ? `${i.ast._tag}${i.ast.checks ? "[" + i.ast.checks.map((c: any) => c.annotations?.expected ?? c._tag).join(",") + "]" : ""}` : ""
  console.log(pad + i._tag, ast, i.path ?? "", i._tag === "Filter" ? JSON.stringify({ exp: i.filter.annotations?.expected, msg: i.filter.annotations?.message, rep: i.filter.annotations?.representation }) : "", i.annotations ? JSON.stringify(i.annotations) : "")
  if (i.issue) dump(i.issue, d + 1)
  if (i.issues) for (const x of i.issues) dump(x, d + 1)
}
const t = (s: any, v: unknown) => {
  const r = Schema.decodeUnknownExit(s, { errors: "all", onExcessProperty: "error" } as any)(v)
  console.log("==", JSON.stringify(v)); if (r._tag === "Failure") { const e: any = (r.cause as any).reasons?.[0]?.error ?? (r.cause as any); dump(e.issue ?? e) }
}
t(MessageCreate, { to: "+261340000001", text: "" })
t(MessageCreate, { to: "+261340000001", text: 5 })
t(MessageCreate, [1])
t(MessageCreate, {})
t(BatchCreate, { recipients: [], text: "a", send_at: "x" })
t(WebhookCreate, { url: "x", events: ["nope"], description: 4 })
t(ContactWriteInput, { phone_number: "+261340000001", status: "x", first_name: "a".repeat(101) })
