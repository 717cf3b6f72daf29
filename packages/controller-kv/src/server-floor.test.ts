import { pino } from "pino";
import { describe, expect, test } from "vitest";
import { ControllerKvError } from "./errors.js";
import { checkServerFloor, SUPPORTED_SERVER_FLOOR, serverDefects } from "./server-floor.js";

const silent = pino({ level: "silent" });

describe("the supported server floor", () => {
  test.each([
    ["2.9.25", 2],
    ["2.9.10", 2],
    ["2.10.0", 1],
    ["2.10.4", 1],
    ["2.10.5", 0],
    ["2.10.27", 0],
    ["2.12.15", 0],
    ["2.15.3", 0],
    ["3.0.0", 0],
    ["v2.10.4-beta.1", 1],
    [undefined, 2],
    ["nonsense", 2],
  ])("nats-server %s has %i of the defects", (version, count) => {
    expect(serverDefects(version)).toHaveLength(count);
  });

  test("below the floor, refuses with server-below-floor, naming the defects and the versions that fix them", () => {
    const error = (() => {
      try {
        checkServerFloor("2.9.25", false, silent);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ControllerKvError);
    expect((error as ControllerKvError).code).toBe("server-below-floor");
    const message = (error as ControllerKvError).message;
    for (const part of ["2.9.25", SUPPORTED_SERVER_FLOOR, "nats-server#4771", "2.10.5", "consumer_limits", "2.10.0"])
      expect(message).toContain(part);
    expect(message).toContain("--allow-unsupported-server");
  });

  test("below the floor with the opt-in, warns and goes on", () => {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    expect(() => checkServerFloor("2.10.4", true, logger)).not.toThrow();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).msg).toContain("nats-server#4771");
  });

  test("from the floor on, neither refuses nor warns", () => {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    checkServerFloor(SUPPORTED_SERVER_FLOOR, false, logger);
    expect(lines).toEqual([]);
  });
});
