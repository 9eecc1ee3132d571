// htm bound to Preact's h: JSX-like templates without a build step.
import htm from "htm"
import { h } from "preact"

export const html = htm.bind(h)
