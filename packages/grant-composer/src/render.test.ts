import { parseCatalogue } from "@mesh/manifest-schema";
import { describe, expect, it } from "vitest";
import { GrantError } from "./errors.js";
import { composeControllerGrant, composeMachineGrant } from "./grant.js";
import { renderGrantJson, renderJwtPermissions, renderPermissions, renderStateAccountConfig } from "./render.js";

const catalogue = parseCatalogue([
  { name: "operators-agent", state: { "mcp-servers": {} }, reads: ["licence-manager.bindings"] },
  { name: "licence-manager", state: { bindings: {} } },
]);
const machine = composeMachineGrant({ machine: "node-1", assignments: ["operators-agent"], catalogue });
const idle = composeMachineGrant({ machine: "idle", assignments: [], catalogue });

describe("renderStateAccountConfig", () => {
  const users = [
    { grant: composeControllerGrant(), password: "controller-pw" },
    { grant: machine, nkey: "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4" },
    { grant: idle, password: "idle-pw" },
  ];

  it("renders nothing allowed as deny-all, never as an empty (unrestricted) allow list", () => {
    const config = renderStateAccountConfig({ users });
    expect(config).not.toContain("allow: []");
    expect(config).toContain(`publish: { deny: [">"] }`);
  });

  it("refuses a user twice, a user with both or neither authentication, and a bad account name", () => {
    const code = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return error instanceof GrantError ? error.code : "other";
      }
      return "none";
    };
    expect(code(() => renderStateAccountConfig({ users: [users[0]!, users[0]!] }))).toBe("bad-user");
    expect(code(() => renderStateAccountConfig({ users: [{ grant: idle }] }))).toBe("bad-user");
    expect(code(() => renderStateAccountConfig({ users: [{ grant: idle, password: "a", nkey: "U" }] }))).toBe(
      "bad-user",
    );
    expect(code(() => renderStateAccountConfig({ users, account: "state account" }))).toBe("bad-user");
    expect(code(() => renderStateAccountConfig({ users, jetstream: { maxFile: "1 gigabyte" } }))).toBe("bad-limit");
  });
});

describe("renderJwtPermissions", () => {
  it("copies the allow lists, and denies everything where nothing is allowed", () => {
    expect(renderJwtPermissions(machine)).toEqual({
      pub: { allow: machine.permissions.publish.allow },
      sub: { allow: ["_INBOX_node-1.>"] },
    });
    expect(renderJwtPermissions(idle).pub).toEqual({ deny: [">"] });
  });
});

describe("every rendered form", () => {
  const controller = composeControllerGrant();
  it.each([
    ["a machine", machine],
    ["a machine that needs nothing", idle],
    ["the controller", controller],
  ])("agrees for %s, and never carries an empty allow list", (_, grant) => {
    const permissions = renderPermissions(grant);
    expect(renderGrantJson(grant).permissions).toEqual(permissions);
    const jwt = renderJwtPermissions(grant);
    expect({ publish: jwt.pub, subscribe: jwt.sub }).toEqual(permissions);
    const conf = renderStateAccountConfig({ users: [{ grant, password: "pw" }] });
    for (const [name, rendered] of Object.entries(permissions)) {
      const [kind, subjects] = Object.entries(rendered)[0] as [string, string[]];
      expect(subjects.length, `${name} ${kind}`).toBeGreaterThan(0);
      expect(conf).toContain(`${name}: { ${kind}: ${JSON.stringify(subjects).replaceAll(",", ", ")} }`);
    }
    expect(JSON.stringify(renderGrantJson(grant))).not.toContain('"allow":[]');
  });

  it("denies everything to a machine that needs nothing", () => {
    expect(renderGrantJson(idle).permissions).toEqual({
      publish: { deny: [">"] },
      subscribe: { allow: ["_INBOX_idle.>"] },
    });
  });
});
