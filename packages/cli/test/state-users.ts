// This package's test kit (outside src/, never built): users of a test server's state account.
import { composeControllerGrant, type Grant, renderStateAccountConfig } from "@mesh/grant-composer";
import type { Catalogue } from "@mesh/manifest-schema";

/** An admin of the state account (password `admin`), used only to seed and inspect buckets. */
export const ADMIN_GRANT: Grant = {
  user: "admin",
  inboxPrefix: "_INBOX",
  permissions: { publish: { allow: [">"] }, subscribe: { allow: [">"] } },
};

/**
 * The state account with the controller's state user as composed (user `controller`, password `pw`; with a
 * catalogue, it may compact that catalogue's buckets) and the admin.
 */
export function controllerAndAdminConfig(catalogue?: Catalogue): string {
  return renderStateAccountConfig({
    users: [
      { grant: composeControllerGrant(catalogue ? { catalogue } : {}), password: "pw" },
      { grant: ADMIN_GRANT, password: "admin" },
    ],
  });
}
