/**
 * The layer check (`npm test` runs it: test/architecture/layers.test.ts; `npm run check:layers`
 * alone). The service's folders under src/, lowest first: a module may import from its own
 * folder and from folders of lower levels only, never from a folder of its own level or above,
 * and no two files may import each other, directly or through others.
 *
 * This list is the one place the order is written; docs/architecture.md explains it.
 */
export const layers = [
  // what everything may use: domain rules and types, ids and time sources, configuration
  ["domain", "platform", "config"],
  ["clock", "observability"],
  // the database: connections, migrations, the boundary every store maps its failures through
  ["db"],
  ["secrets"],
  // modules that own their tables, and the provider port with its adapters (SMPP, the in-process simulator), and process leases
  ["provider", "processes", "organisations", "ledger", "idempotency", "contacts"],
  // status webhooks: below messages, whose status changes compose its outbox (webhooks/WebhookStore.ts);
  // what it needs from above (the message's representation) comes through its ports
  ["webhooks"],
  // each organisation's opt-out list: its changes write their events (webhooks); admission and
  // hand-over (messages) check it
  ["consent"],
  ["messages"],
  // inbound (MO) messages: joined from their parts, routed (a reply by the messages it answers),
  // consent applied; below the inbox (receipts) that stores their parts
  ["inbound"],
  // receipts apply to messages; the background loops (dispatch) run the receipt applier
  ["batches", "receipts"],
  ["dispatch"],
  // the HTTP interface: its declaration (api), then the handlers and edge (http) and the console
  ["api"],
  ["http", "console"],
  ["admin"],
  // the composition root, and the typed client package (which may use only api and domain)
  ["app", "client"]
]

const folder = (name) => `^src/${name}/`
const anyOf = (names) => `^src/(${names.join("|")})/`

const upward = layers.flatMap((level, i) => {
  const above = layers.slice(i).flat()
  return level.map((name) => ({
    name: `layer-${name}`,
    comment: `src/${name}/ may import only from lower layers (.dependency-cruiser.mjs)`,
    severity: "error",
    from: { path: folder(name) },
    to: { path: anyOf(above.filter((other) => other !== name)) }
  }))
})

export default {
  forbidden: [
    ...upward,
    {
      name: "no-circular",
      comment: "no two modules import each other, directly or through others",
      severity: "error",
      from: {},
      to: { circular: true }
    },
    {
      name: "client-public-only",
      comment: "the typed client (packed on its own) may use only the API's declaration and domain rules",
      severity: "error",
      from: { path: "^src/client/" },
      to: { path: "^src/", pathNot: anyOf(["client", "api", "domain"]) }
    },
    {
      name: "src-self-contained",
      comment: "the service never imports the test suites, benches, examples or the SMSC simulator program",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|bench|examples|simulator|bin)/" }
    },
    {
      name: "unknown-folder",
      comment: "every folder under src/ has its place in the layers",
      severity: "error",
      from: { path: "^src/[^/]+/", pathNot: anyOf(layers.flat()) },
      to: {}
    }
  ],
  options: {
    // TypeScript 7 has no JavaScript API: files are parsed with swc
    parser: "swc",
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" }
  }
}
