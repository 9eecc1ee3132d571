/** Per-endpoint permission checks against the current key (docs/integrators.md#authentication). */
import { Effect } from "effect"
import { CurrentKey } from "../api/Security.ts"
import { InsufficientPermissions } from "../domain/Errors.ts"
import type { Permission } from "../domain/Permissions.ts"

/** The current key's organisation when it holds `permission`, else 403 insufficient_permissions. */
export const requirePermission = (permission: Permission) =>
  Effect.flatMap(CurrentKey, (key) =>
    key.permissions.has(permission)
      ? Effect.succeed(key.organisationId)
      : Effect.fail(InsufficientPermissions.withMessage(`This API key lacks the ${permission} permission`))
  )
