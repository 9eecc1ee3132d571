import type { Migration } from "./Migration.ts"

/** Migration 21: two-way messages and consent: inbound parts, inbound messages, inbound numbers, opt-outs, the simulator's replies. Never edit it once shipped: add the next number. */
export const migration: Migration = {
  version: 21,
  name: "two-way messages and consent: inbound parts, inbound messages, inbound numbers, opt-outs, the simulator's replies",
  statements: [
    // Each part of an inbound (MO) message as it arrived, committed before the provider is told
    // it was received; no organisation yet (routing comes once the message is whole). `ref` is
    // null for a whole message; `joined_at` is set when its message is made, and the row is kept
    // a little longer so that a part the provider sends again is recognised and not counted twice.
    `CREATE TABLE inbound_parts (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      source text NOT NULL,
      from_number text NOT NULL,
      to_number text NOT NULL,
      data_coding integer NOT NULL,
      ref integer,
      total integer NOT NULL CHECK (total BETWEEN 1 AND 255),
      seq integer NOT NULL CHECK (seq BETWEEN 1 AND total),
      octets bytea NOT NULL,
      received_at timestamptz NOT NULL,
      joined_at timestamptz
    )`,
    `CREATE INDEX inbound_parts_waiting ON inbound_parts (received_at) WHERE joined_at IS NULL`,
    `CREATE INDEX inbound_parts_message ON inbound_parts (from_number, to_number, source, ref, total)`,
    `CREATE INDEX inbound_parts_joined ON inbound_parts (joined_at) WHERE joined_at IS NOT NULL`,
    // Inbound messages, routed to an organisation or not (organisation_id null: kept for the
    // operator). The key is the id alone, as an unrouted message has no organisation; an
    // organisation's messages are read through the index that leads with it.
    `CREATE TABLE inbound_messages (
      id uuid PRIMARY KEY,
      organisation_id uuid REFERENCES organisations (id),
      source text NOT NULL,
      from_number text NOT NULL,
      to_number text NOT NULL,
      text text NOT NULL,
      text_hex text,
      data_coding integer NOT NULL,
      keyword text,
      segments integer NOT NULL,
      incomplete boolean NOT NULL,
      in_reply_to uuid,
      received_at timestamptz NOT NULL,
      routed boolean NOT NULL,
      erased_at timestamptz
    )`,
    `CREATE UNIQUE INDEX inbound_messages_organisation ON inbound_messages (organisation_id, received_at DESC, id DESC)
      WHERE organisation_id IS NOT NULL`,
    `CREATE INDEX inbound_messages_unrouted ON inbound_messages (received_at DESC, id DESC) WHERE NOT routed`,
    `CREATE INDEX inbound_messages_erasable ON inbound_messages (organisation_id, received_at)
      WHERE erased_at IS NULL AND organisation_id IS NOT NULL`,
    // The numbers an organisation receives on: dedicated (keyword '') or shared by keywords. A
    // keyword is held once per number; dedicated or shared, never both (InboundNumbers.ts, under a
    // lock per number).
    `CREATE TABLE inbound_numbers (
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      number text NOT NULL,
      keyword text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, number, keyword)
    )`,
    `CREATE UNIQUE INDEX inbound_numbers_keyword ON inbound_numbers (number, keyword)`,
    // Numbers opted out of an organisation's messages; admission and hand-over look one up by its key.
    `CREATE TABLE opt_outs (
      organisation_id uuid NOT NULL REFERENCES organisations (id),
      phone_number text NOT NULL,
      id uuid NOT NULL,
      source text NOT NULL CHECK (source IN ('sms', 'api', 'operator')),
      inbound_message_id uuid,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organisation_id, phone_number)
    )`,
    `CREATE INDEX opt_outs_newest ON opt_outs (organisation_id, created_at DESC, id DESC)`,
    // The in-process simulator's replies owed (its test numbers answer: docs/two-way.md):
    // each sent to the service's inbox once due, then removed; claimed for a while by the process sending it.
    `CREATE TABLE simulator_replies (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      from_number text NOT NULL,
      to_number text NOT NULL,
      text text NOT NULL,
      due_at timestamptz NOT NULL,
      claim_until timestamptz
    )`,
    `CREATE INDEX simulator_replies_due ON simulator_replies (due_at)`,
    // a reply goes to the organisation that last sent to its sender under the number it answers
    // (InboundRouting.ts): found by recipient, newest id (made from the creation instant) first
    `CREATE INDEX messages_to_number ON messages (to_number, id)`
  ]
}
