package meshstate_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	meshstate "github.com/mesh/mesh-state/packages/sdk-go"
)

// The README quotes these Examples (readme_test.go holds it to them); go test runs them against
// inProcessRuntime, where a bundle would call meshstate.ConnectStdio.

// Server is a value of the module's bucket mcp-servers.
type Server struct {
	URL string `json:"url"`
}

// Binding is a value of the licence manager's bucket bindings, which the module reads.
type Binding struct {
	Licence    string `json:"licence"`
	Generation int    `json:"generation"`
}

// A module's own bucket: create a key only if it is absent, and match the refusal by its reason.
func Example() {
	ctx := context.Background()
	client := meshstate.Attach(inProcessRuntime(nil)) // a bundle: meshstate.ConnectStdio(meshstate.LineChannelOptions{})
	defer client.Close(ctx)

	servers := meshstate.State[Server](client, "mcp-servers") // *Bucket[Server]
	rev, err := servers.Create(ctx, "all.github", Server{URL: "https://mcp.github.example"})
	fmt.Println("created at revision", rev, err)

	_, err = servers.Create(ctx, "all.github", Server{URL: "https://elsewhere.example"}) // conflict: it exists
	var refused *meshstate.StateError
	if errors.As(err, &refused) && refused.Reason == meshstate.ReasonConflict {
		fmt.Println("refused:", refused.Reason, "the key is at revision", refused.Revision)
	}
	// Output:
	// created at revision 1 <nil>
	// refused: conflict the key is at revision 1
}

// Update is a compare-and-set loop: two writers counting at once never lose a count.
func ExampleBucket_Update() {
	ctx := context.Background()
	client := meshstate.Attach(inProcessRuntime(nil))
	defer client.Close(ctx)

	meta := meshstate.State[int](client, "meta")
	var writers sync.WaitGroup
	for range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for range 5 {
				if _, err := meta.Update(ctx, "starts", func(n int, found bool) (int, error) { return n + 1, nil }); err != nil {
					fmt.Println(err)
				}
			}
		}()
	}
	writers.Wait()
	starts, _, _ := meta.Get(ctx, "starts")
	fmt.Println("starts:", starts.Value)
	// Output:
	// starts: 10
}

// The secret rule runs before anything is sent: a URL with a password in it never leaves the process.
func ExampleBucket_Put() {
	ctx := context.Background()
	client := meshstate.Attach(inProcessRuntime(nil))
	defer client.Close(ctx)

	servers := meshstate.State[Server](client, "mcp-servers")
	_, err := servers.Put(ctx, "all.internal", Server{URL: "https://deploy:hunter2-prod@git.internal.example"})
	var refused *meshstate.StateError
	if errors.As(err, &refused) {
		fmt.Println(refused.Reason, refused.Path, refused.Kind)
	}
	// Output:
	// secret-field url url-password
}

// A watch gives the current values, one EventCurrent, then every change; leaving the loop unwatches.
func ExampleReadOnlyBucket_Watch() {
	ctx := context.Background()
	client := meshstate.Attach(inProcessRuntime(nil))
	defer client.Close(ctx)

	servers := meshstate.State[Server](client, "mcp-servers")
	_, _ = servers.Put(ctx, "all.github", Server{URL: "https://mcp.github.example"})
	_, _ = servers.Put(ctx, "machine-1.files", Server{URL: "http://127.0.0.1:7000"})

	for event, err := range servers.Watch(ctx, meshstate.Filter("all.>")) { // break = unwatch
		if err != nil {
			fmt.Println(err)
			break
		}
		switch event.Type {
		case meshstate.EventPut:
			fmt.Println("put", event.Key, event.Value.URL)
		case meshstate.EventCurrent:
			fmt.Println("current: changes follow")
			_, _ = servers.Put(ctx, "all.gitlab", Server{URL: "https://mcp.gitlab.example"})
		}
		if event.Key == "all.gitlab" {
			break
		}
	}
	// Output:
	// put all.github https://mcp.github.example
	// current: changes follow
	// put all.gitlab https://mcp.gitlab.example
}

// A bucket the module reads, kept as a live map: WaitSynced, then Get as often as needed.
func ExampleReadOnlyBucket_Mirror() {
	ctx := context.Background()
	client := meshstate.Attach(inProcessRuntime(map[string]any{
		"licence-manager.bindings/node-1": Binding{Licence: "L-100", Generation: 3},
	}))
	defer client.Close(ctx)

	bindings := meshstate.Reads[Binding](client, "licence-manager.bindings") // *ReadOnlyBucket[Binding]: no Put
	mirror := bindings.Mirror(ctx)
	if err := mirror.WaitSynced(ctx); err != nil {
		fmt.Println(err)
		return
	}
	binding, found := mirror.Get("node-1")
	fmt.Println(binding.Licence, binding.Generation, found)
	// Output:
	// L-100 3 true
}

// A read says how current it must be; without a level the runtime reads at its default, session, which
// never goes back on what this bundle wrote or read. A word the wire does not have is refused here.
func ExampleConsistency() {
	ctx := context.Background()
	servers := meshstate.Reads[Server](meshstate.Attach(inProcessRuntime(map[string]any{
		"operators-agent.mcp-servers/all.github": Server{URL: "https://mcp.github.example"},
	})), "operators-agent.mcp-servers")

	entry, found, err := servers.Get(ctx, "all.github", meshstate.ConsistencyStrong) // from the stream's leader
	fmt.Println(entry.Value.URL, found, err)

	mirror := servers.Mirror(ctx, meshstate.Filter("all.>"), meshstate.ConsistencyLocal) // any replica's snapshot
	defer mirror.Stop(ctx)
	if mirror.WaitSynced(ctx) == nil {
		fmt.Println("mirrored:", mirror.Len())
	}

	_, _, err = servers.Get(ctx, "all.github", meshstate.Consistency("eventual"))
	if refused := (*meshstate.StateError)(nil); errors.As(err, &refused) {
		fmt.Println(refused.Reason, refused.Path)
	}
	// Output:
	// https://mcp.github.example true <nil>
	// mirrored: 1
	// bad-request consistency
}
