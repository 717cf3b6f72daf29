// Every test process asks the harness to reap its servers on SIGINT/SIGTERM/SIGHUP (a Ctrl-C leaves none behind).
import { reapOnSignals } from "@mesh/nats-harness";

reapOnSignals();
