// The demo's reader: a dashboard module that `reads: ["operators-agent.mcp-servers"]`. It lists what is
// registered, then tries to write — which its runtime refuses as read-only, before NATS is touched.
//
//   dashboard show    list the registrations, then try one write and report the refusal
import { StateError } from "@mesh/sdk-ts";
import { connectStdio } from "@mesh/sdk-ts/stdio";
import { reporter } from "./output.js";

const report = reporter("dashboard");
const READ = "operators-agent.mcp-servers";

async function main(): Promise<number> {
  const mesh = await connectStdio();
  try {
    const servers = mesh.reads(READ);
    report("listed", { servers: await servers.keys() });
    // `reads()` gives a handle with no write methods, so a bundle cannot write by mistake through it; a
    // bundle that insists (here: a state handle on the read's name) still meets the runtime's refusal.
    try {
      await mesh.state(READ).put("all.dashboard-note", { transport: "http", url: "https://dashboard.example" });
      report("wrote", { key: "all.dashboard-note" });
      return 1;
    } catch (error) {
      if (!StateError.is(error, "read-only")) throw error;
      report("refused", { reason: error.reason, message: error.message });
      return 0;
    }
  } finally {
    await mesh.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    report("failed", { message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  },
);
