package meshstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	meshstate "github.com/mesh/mesh-state/packages/sdk-go"
)

// inProcessRuntime starts the runtime's side of the wire in this process, over a pair of pipes, and returns
// the bundle's end. It answers the state verbs from buckets in memory, by the wire's rules (revisions,
// conflicts, a watch's current values, its marker, then its changes, one batch answered before the next),
// so the Examples run the SDK as a bundle runs it. It checks no grant and no membership: runtime-state
// does, and integration/src/sdk-go.nats.test.ts runs the SDK against it and a real nats-server.
// preload holds values already stored, as "bucket/key": value (another module's writes, for Reads).
func inProcessRuntime(preload map[string]any) *meshstate.LineChannel {
	toRuntime, fromBundle := io.Pipe()
	toBundle, fromRuntime := io.Pipe()
	runtime := &memoryRuntime{
		channel: meshstate.NewLineChannel(toRuntime, fromRuntime, meshstate.LineChannelOptions{}),
		values:  map[string]storedEntry{},
		watches: map[string]*runtimeWatch{},
	}
	for name, value := range preload {
		bucket, key, _ := strings.Cut(name, "/")
		encoded, _ := json.Marshal(value)
		runtime.store(bucket, key, encoded)
	}
	runtime.channel.Handle("mesh/state.get", runtime.get)
	runtime.channel.Handle("mesh/state.put", runtime.put)
	runtime.channel.Handle("mesh/state.watch", runtime.watch)
	runtime.channel.Handle("mesh/state.unwatch", runtime.unwatch)
	return meshstate.NewLineChannel(toBundle, fromBundle, meshstate.LineChannelOptions{})
}

type memoryRuntime struct {
	channel  *meshstate.LineChannel
	lock     sync.Mutex
	revision uint64
	values   map[string]storedEntry // by bucket + "/" + key
	watches  map[string]*runtimeWatch
	opened   int
}

type storedEntry struct {
	Key      string          `json:"key"`
	Value    json.RawMessage `json:"value"`
	Revision uint64          `json:"revision"`
	Updated  string          `json:"updated"`
}

type runtimeWatch struct {
	bucket, filter string
	changes        chan []any // batches, sent in order, each once the bundle answered the one before
	stop           chan struct{}
}

// verbParams holds the params of every verb the Examples use: put's value and condition, then the names.
type verbParams struct {
	Value    json.RawMessage `json:"value"`
	Revision *uint64         `json:"revision"`
	Bucket   string          `json:"bucket"`
	Key      string          `json:"key"`
	Filter   string          `json:"filter"`
	Watch    string          `json:"watch"`
}

func (r *memoryRuntime) get(_ context.Context, raw json.RawMessage) (any, error) {
	var params verbParams
	_ = json.Unmarshal(raw, &params)
	r.lock.Lock()
	defer r.lock.Unlock()
	if entry, found := r.values[params.Bucket+"/"+params.Key]; found {
		return entry, nil
	}
	return nil, nil
}

func (r *memoryRuntime) put(_ context.Context, raw json.RawMessage) (any, error) {
	var params verbParams
	_ = json.Unmarshal(raw, &params)
	r.lock.Lock()
	defer r.lock.Unlock()
	current := r.values[params.Bucket+"/"+params.Key].Revision
	if params.Revision != nil && *params.Revision != current {
		data, _ := json.Marshal(map[string]any{"reason": "conflict", "revision": current})
		return nil, &meshstate.RPCError{Code: -32020, Message: "key " + params.Key + " changed meanwhile", Data: data}
	}
	return map[string]uint64{"revision": r.store(params.Bucket, params.Key, params.Value)}, nil
}

// store keeps a value and hands it to the bucket's watches whose filter it matches; call with r.lock held.
func (r *memoryRuntime) store(bucket, key string, value json.RawMessage) uint64 {
	r.revision++
	entry := storedEntry{key, value, r.revision, time.Now().UTC().Format(time.RFC3339Nano)}
	r.values[bucket+"/"+key] = entry
	for _, watch := range r.watches {
		if watch.bucket == bucket && filterMatches(watch.filter, key) {
			watch.changes <- []any{putEvent(entry)}
		}
	}
	return r.revision
}

func putEvent(entry storedEntry) map[string]any {
	return map[string]any{"type": "put", "key": entry.Key, "value": entry.Value, "revision": entry.Revision, "updated": entry.Updated}
}

func (r *memoryRuntime) watch(_ context.Context, raw json.RawMessage) (any, error) {
	var params verbParams
	_ = json.Unmarshal(raw, &params)
	r.lock.Lock()
	defer r.lock.Unlock()
	r.opened++
	id := fmt.Sprintf("w%d", r.opened)
	watch := &runtimeWatch{bucket: params.Bucket, filter: params.Filter, changes: make(chan []any, 64), stop: make(chan struct{})}
	var current []any
	for _, name := range slices.Sorted(maps.Keys(r.values)) {
		if bucket, key, _ := strings.Cut(name, "/"); bucket == params.Bucket && filterMatches(params.Filter, key) {
			current = append(current, putEvent(r.values[name]))
		}
	}
	watch.changes <- append(current, map[string]any{"type": "current"})
	r.watches[id] = watch
	go func() {
		for {
			select {
			case events := <-watch.changes:
				_, _ = r.channel.Request(context.Background(), "mesh/state", map[string]any{"watch": id, "events": events})
			case <-watch.stop:
				return
			}
		}
	}()
	return map[string]string{"watch": id}, nil
}

func (r *memoryRuntime) unwatch(_ context.Context, raw json.RawMessage) (any, error) {
	var params verbParams
	_ = json.Unmarshal(raw, &params)
	r.lock.Lock()
	defer r.lock.Unlock()
	if watch, found := r.watches[params.Watch]; found {
		close(watch.stop)
		delete(r.watches, params.Watch)
	}
	return struct{}{}, nil
}

// filterMatches is NATS's subject match: "*" is one token, a last ">" one or more, "" every key.
func filterMatches(filter, key string) bool {
	if filter == "" {
		return true
	}
	filterTokens, keyTokens := strings.Split(filter, "."), strings.Split(key, ".")
	for index, token := range filterTokens {
		switch {
		case token == ">":
			return len(keyTokens) > index
		case index >= len(keyTokens) || (token != "*" && token != keyTokens[index]):
			return false
		}
	}
	return len(filterTokens) == len(keyTokens)
}
