// Command onechannel is the Go bundle of the one-channel test (integration/src/one-channel.nats.test.ts, with
// its host in integration/src/one-channel/host.ts): a bundle that already has a JSON-RPC channel to its
// host — it sends mesh/echo and answers the host's mesh/event — attaches the state verbs to that same
// channel. Echoes, puts and a watch are interleaved; each mesh/event is answered only once the watch has
// seen every put, so host requests and watch batches are in flight at once.
//
// Usage: onechannel [rounds]. Exits 0 when every echo came back and the watch saw every put.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"

	meshstate "github.com/mesh/mesh-state/packages/sdk-go"
)

func main() {
	rounds := 50
	if len(os.Args) > 1 {
		rounds, _ = strconv.Atoi(os.Args[1])
	}
	ctx := context.Background()
	channel := meshstate.NewLineChannel(os.Stdin, os.Stdout, meshstate.LineChannelOptions{})
	allWatched := make(chan struct{})
	var eventsLock sync.Mutex
	events := 0
	channel.Handle("mesh/event", func(ctx context.Context, params json.RawMessage) (any, error) {
		var event struct {
			Seq int `json:"seq"`
		}
		if err := json.Unmarshal(params, &event); err != nil {
			return nil, &meshstate.RPCError{Code: -32602, Message: err.Error()}
		}
		eventsLock.Lock()
		events++
		eventsLock.Unlock()
		select {
		case <-allWatched:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return map[string]int{"seq": event.Seq}, nil
	})
	client := meshstate.Attach(channel)
	notes := meshstate.State[map[string]int](client, "notes")

	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan int)
	go func() {
		seen := map[string]bool{}
		for event, err := range notes.Watch(watchCtx) {
			if err != nil {
				break
			}
			if event.Type == meshstate.EventPut {
				seen[event.Key] = true
			}
			if len(seen) == rounds {
				close(allWatched)
				break
			}
		}
		watched <- len(seen)
	}()

	var group sync.WaitGroup
	failures := make(chan error, 2*rounds)
	for index := range rounds {
		group.Add(1)
		go func() {
			defer group.Done()
			raw, err := channel.Request(ctx, "mesh/echo", map[string]int{"index": index})
			var echo struct {
				Index int `json:"index"`
			}
			if err == nil && (json.Unmarshal(raw, &echo) != nil || echo.Index != index) {
				err = fmt.Errorf("echo %d came back as %s", index, raw)
			}
			if err != nil {
				failures <- err
			}
		}()
		group.Add(1)
		go func() {
			defer group.Done()
			if _, err := notes.Put(ctx, fmt.Sprintf("k%d", index), map[string]int{"index": index}); err != nil {
				failures <- err
			}
		}()
	}
	group.Wait()
	close(failures)
	for err := range failures {
		fmt.Fprintln(os.Stderr, "onechannel:", err)
		os.Exit(1)
	}
	seen := <-watched
	stopWatch()
	if err := client.Close(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "onechannel:", err)
		os.Exit(1)
	}
	eventsLock.Lock()
	fmt.Fprintf(os.Stderr, "go-bundle: %d echoes, %d keys watched, %d host events answered\n", rounds, seen, events)
	eventsLock.Unlock()
}
