// Polling that keeps one request in flight at a time and never shows an answer of a view that
// is no longer on screen.
import { useCallback, useEffect, useRef, useState } from "preact/hooks"

/** How often what is on screen is read again. */
export const liveMs = 1500

/**
 * Runs `load` now, then every `intervalMs` while the tab is visible, and again whenever `deps`
 * change; `refresh()` asks for a run at once (after the current one when one is in flight).
 * Returns `{ data, error, refresh }`: the last answer of the current deps, the last failure
 * (cleared by the next success).
 */
export const usePolling = (load, intervalMs, deps) => {
  const [state, setState] = useState({ data: undefined, error: undefined })
  const loadRef = useRef(load)
  loadRef.current = load
  const generation = useRef(0)
  const running = useRef(false)
  const again = useRef(false)

  const run = useCallback(async () => {
    if (running.current) {
      again.current = true
      return
    }
    running.current = true
    do {
      again.current = false
      const current = generation.current
      try {
        const data = await loadRef.current()
        if (current === generation.current) setState({ data, error: undefined })
      } catch (error) {
        if (current === generation.current) setState((s) => ({ data: s.data, error }))
      }
    } while (again.current)
    running.current = false
  }, [])

  useEffect(() => {
    generation.current += 1
    setState({ data: undefined, error: undefined })
    run()
    // a tab in the background asks for nothing until it is looked at again
    const timer = setInterval(() => document.hidden || run(), intervalMs)
    return () => clearInterval(timer)
  }, deps)

  return { ...state, refresh: run }
}
