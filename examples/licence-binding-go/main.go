// Command licence is the research note's licence binding, as two bundles of one Go program:
//
//	licence bind MACHINE LICENCE VAULT-PATH   the licence manager binds a machine (module licence-manager)
//	licence store-token MACHINE TOKEN         what must never happen: the token itself (refused)
//	licence agent                             a machine's agent (module licence-agent, MESH_MACHINE)
//
// The bucket licence-manager.bindings holds, per machine, the latest binding and its generation, and a
// reference to where the token lives — never the token. An agent reads its binding at start and follows
// rotations; a machine that was off reads the latest binding, and nothing is replayed.
// Reports go to stderr as JSON lines; stdout is the runtime's channel.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	meshstate "github.com/mesh/mesh-state/packages/sdk-go"
)

// Binding is a machine's licence binding: the latest one only, with its generation.
type Binding struct {
	Licence    string `json:"licence"`
	Generation int    `json:"generation"`
	// Token says where the licence token lives; the token itself stays on request/reply, never stored.
	Token TokenRef `json:"tokenRef"`
}

// TokenRef is a reference to a secret, not the secret.
type TokenRef struct {
	Store string `json:"store"`
	Path  string `json:"path"`
}

func report(fields map[string]any) {
	line, _ := json.Marshal(fields)
	fmt.Fprintln(os.Stderr, string(line))
}

func refused(err error) {
	var refusal *meshstate.StateError
	if errors.As(err, &refusal) {
		report(map[string]any{"event": "refused", "reason": refusal.Reason, "path": refusal.Path, "kind": refusal.Kind})
		os.Exit(1)
	}
	report(map[string]any{"event": "failed", "error": err.Error()})
	os.Exit(1)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client := meshstate.ConnectStdio(meshstate.LineChannelOptions{})
	defer func() { _ = client.Close(context.Background()) }()
	if len(os.Args) < 2 {
		report(map[string]any{"event": "usage"})
		os.Exit(2)
	}
	switch os.Args[1] {
	case "bind":
		bindings := meshstate.State[Binding](client, "bindings")
		machine, licence, path := os.Args[2], os.Args[3], os.Args[4]
		// The next generation, whatever another manager instance wrote meanwhile.
		updated, err := bindings.Update(ctx, machine, func(current Binding, _ bool) (Binding, error) {
			return Binding{Licence: licence, Generation: current.Generation + 1, Token: TokenRef{Store: "vault", Path: path}}, nil
		})
		if err != nil {
			refused(err)
		}
		report(map[string]any{"event": "bound", "machine": machine, "generation": updated.Value.Generation})
	case "store-token":
		// Wrong on purpose: a token is a credential, and the secret rule refuses it by its shape.
		bindings := meshstate.State[map[string]any](client, "bindings")
		if _, err := bindings.Put(ctx, os.Args[2], map[string]any{"licence": "L", "grant": os.Args[3]}); err != nil {
			refused(err)
		}
		report(map[string]any{"event": "stored"})
	case "agent":
		agent(ctx, client, os.Getenv("MESH_MACHINE"))
	default:
		report(map[string]any{"event": "usage"})
		os.Exit(2)
	}
}

// agent reads the machine's binding at start, then follows its rotations until the runtime stops it.
func agent(ctx context.Context, client *meshstate.Client, machine string) {
	bindings := meshstate.Reads[Binding](client, "licence-manager.bindings")
	current, found, err := bindings.Get(ctx, machine)
	if err != nil {
		refused(err)
	}
	report(map[string]any{"event": "start", "machine": machine, "bound": found, "generation": current.Value.Generation, "licence": current.Value.Licence})
	known := current.Value.Generation
	// The watch starts with the current value (the one just read, or a newer one): only a newer
	// generation is a rotation. A machine that was off gets the latest binding, never the ones between.
	for event, err := range bindings.Watch(ctx, meshstate.Filter(machine)) {
		if err != nil {
			break // the runtime stopped us (ctx), or the channel closed
		}
		switch event.Type {
		case meshstate.EventPut:
			if event.Value.Generation > known {
				known = event.Value.Generation
				report(map[string]any{"event": "rotated", "machine": machine, "generation": known, "licence": event.Value.Licence, "tokenAt": event.Value.Token.Path})
			}
		case meshstate.EventDelete:
			report(map[string]any{"event": "unbound", "machine": machine})
		case meshstate.EventEnded:
			report(map[string]any{"event": "ended", "reason": event.EndReason})
		}
	}
	report(map[string]any{"event": "stopped", "machine": machine, "generation": known})
}
