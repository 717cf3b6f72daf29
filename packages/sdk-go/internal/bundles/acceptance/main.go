// Command acceptance is the Go bundle of the real-server tests (integration/src/sdk-go.nats.test.ts): the
// scenarios sdk-ts's acceptance bundles run, written against the Go SDK. It reports to the test as JSON
// lines on stderr ({"report": …}); stdout carries the JSON-RPC lines. SIGUSR1 is the test's "go on".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	meshstate "github.com/mesh/mesh-state/packages/sdk-go"
)

func report(fields map[string]any) {
	line, _ := json.Marshal(map[string]any{"report": fields})
	fmt.Fprintln(os.Stderr, string(line))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bundle failed:", err)
	os.Exit(1)
}

func number(text string) int {
	n, err := strconv.Atoi(text)
	if err != nil {
		fail(err)
	}
	return n
}

func reasonOf(err error) string {
	var refused *meshstate.StateError
	if errors.As(err, &refused) {
		return string(refused.Reason)
	}
	if err == nil {
		return ""
	}
	return "not a StateError: " + err.Error()
}

func main() {
	ctx := context.Background()
	goOn := make(chan os.Signal, 1)
	signal.Notify(goOn, syscall.SIGUSR1)
	client := meshstate.ConnectStdio(meshstate.LineChannelOptions{})
	defer func() { _ = client.Close(ctx) }()
	switch os.Args[1] {
	case "counter":
		counter := meshstate.State[int](client, "counter")
		rounds, gaveUp := 0, 0
		increments := number(os.Args[2])
		for range increments {
			_, err := counter.Update(ctx, "hits", func(hits int, _ bool) (int, error) {
				rounds++
				return hits + 1, nil
			})
			if reasonOf(err) == string(meshstate.ReasonConflict) {
				gaveUp++
			} else if err != nil {
				fail(err)
			}
		}
		report(map[string]any{"increments": increments, "rounds": rounds, "gaveUp": gaveUp})
	case "writer":
		operations, seed := number(os.Args[2]), number(os.Args[3])
		random := rand.New(rand.NewPCG(uint64(seed), 7))
		bucket := meshstate.State[map[string]any](client, "mirrored")
		puts, deletes := 0, 0
		for index := range operations {
			key := fmt.Sprintf("k.%d", random.IntN(64))
			if random.Float64() < 0.3 {
				if err := bucket.Delete(ctx, key); err != nil {
					fail(err)
				}
				deletes++
			} else {
				if _, err := bucket.Put(ctx, key, map[string]any{"index": index, "text": strings.Repeat("x", random.IntN(200))}); err != nil {
					fail(err)
				}
				puts++
			}
		}
		if _, err := bucket.Put(ctx, "zz.done", map[string]any{"operations": operations}); err != nil {
			fail(err)
		}
		report(map[string]any{"puts": puts, "deletes": deletes})
	case "mirror":
		mirror := meshstate.State[any](client, "mirrored").Mirror(ctx)
		if err := mirror.WaitSynced(ctx); err != nil {
			fail(err)
		}
		report(map[string]any{"synced": mirror.Len()})
		if err := mirror.Until(ctx, func(values map[string]any) bool { _, done := values["zz.done"]; return done }); err != nil {
			fail(err)
		}
		report(map[string]any{"values": mirror.Snapshot(), "invalid": len(mirror.Invalid())})
		if err := mirror.Stop(ctx); err != nil {
			fail(err)
		}
	case "leave":
		items := meshstate.State[any](client, "items")
		for event, err := range items.Watch(ctx) {
			if err != nil {
				fail(err)
			}
			if event.Type == meshstate.EventCurrent {
				report(map[string]any{"inside": true})
				<-goOn
				break
			}
		}
		report(map[string]any{"left": true})
		<-goOn
		mirror := items.Mirror(ctx)
		if err := mirror.WaitSynced(ctx); err != nil {
			fail(err)
		}
		report(map[string]any{"mirroring": true})
		<-goOn
		if err := mirror.Stop(ctx); err != nil {
			fail(err)
		}
		report(map[string]any{"stopped": true})
		<-goOn
	case "refused":
		items := meshstate.State[any](client, "items")
		first, err := items.Create(ctx, "all.alpha", map[string]any{"name": "alpha"})
		if err != nil {
			fail(err)
		}
		_, again := items.Create(ctx, "all.alpha", map[string]any{"name": "again"})
		var conflict *meshstate.StateError
		errors.As(again, &conflict)
		// A bucket the module only reads, named as if it owned it: the runtime refuses the write.
		_, readOnly := meshstate.State[any](client, "sdk-peer.shared").Put(ctx, "note", "x")
		_, _, notIssued := meshstate.State[any](client, "nope").Get(ctx, "a")
		_, secret := items.Put(ctx, "all.internal", map[string]any{"headers": map[string]any{"Authorization": "Bearer x"}})
		var secretRefusal *meshstate.StateError
		errors.As(secret, &secretRefusal)
		peer, found, err := meshstate.Reads[string](client, "sdk-peer.shared").Get(ctx, "note")
		if err != nil {
			fail(err)
		}
		report(map[string]any{
			"created": first, "conflict": reasonOf(again), "conflictRevision": conflict.Revision,
			"readOnly": reasonOf(readOnly), "notIssued": reasonOf(notIssued),
			"secret": reasonOf(secret), "secretPath": secretRefusal.Path, "secretKind": secretRefusal.Kind,
			"readsGet": peer.Value, "readsFound": found,
		})
	default:
		fail(fmt.Errorf("unknown scenario %q", os.Args[1]))
	}
}
