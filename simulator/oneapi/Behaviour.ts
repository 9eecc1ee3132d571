/**
 * What the OneAPI simulator does with a send request, by recipient
 * (docs/operators.md#the-oneapi-simulator): the simulator test numbers
 * (docs/integrators.md#simulator-test-numbers) reproduced over HTTP, as the SMSC simulator
 * reproduces them over SMPP. Any other number is taken at once, then delivered. The replying
 * numbers (+261340000010 and +261340000011) are taken and delivered as any other; their answer is
 * src/provider/inprocess/ReplyingNumbers.ts.
 */
import type { FinalStatus } from "./Book.ts"

export type Behaviour =
  /** Taken: answered 201 at once, after the slow delay or after the late one, then its receipt (or none). */
  | { readonly kind: "take"; readonly answer: "now" | "slow" | "late"; readonly receipt: FinalStatus | "none" }
  /** Never taken: 400 policyException POL0003. */
  | { readonly kind: "refuse" }
  /** Never taken: 429, every time. */
  | { readonly kind: "throttle" }
  /** Never taken: the first request of a correlator is answered 500 after the late delay, any later one 400 SVC0001. */
  | { readonly kind: "unreachable" }
  /** Never taken, never answered: the request is held open until the client gives up. */
  | { readonly kind: "hold" }

const byNumber: ReadonlyMap<string, Behaviour> = new Map<string, Behaviour>([
  ["+261340000001", { kind: "take", answer: "now", receipt: "DeliveredToTerminal" }],
  ["+261340000002", { kind: "take", answer: "now", receipt: "DeliveryImpossible" }],
  ["+261340000003", { kind: "refuse" }],
  ["+261340000004", { kind: "take", answer: "late", receipt: "DeliveredToTerminal" }],
  ["+261340000005", { kind: "throttle" }],
  ["+261340000006", { kind: "take", answer: "now", receipt: "none" }],
  ["+261340000007", { kind: "take", answer: "slow", receipt: "DeliveredToTerminal" }],
  ["+261340000008", { kind: "unreachable" }],
  ["+261340000009", { kind: "hold" }]
])

const otherwise: Behaviour = { kind: "take", answer: "now", receipt: "DeliveredToTerminal" }

/** The behaviour for a recipient in E.164 form (`+261…`, without `tel:`). */
export const behaviourOf = (to: string): Behaviour => byNumber.get(to) ?? otherwise
