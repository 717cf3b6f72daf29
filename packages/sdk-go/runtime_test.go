package meshstate

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

// fakeRuntime stands in for runtime-state in unit tests: it is a Channel, so the client under test talks
// to it exactly as to a real channel; the wire contract, not NATS (the integration tests use the real one).
type fakeRuntime struct {
	lock     sync.Mutex
	handlers map[string]Handler
	sent     []sentRequest
	answer   func(method string, params json.RawMessage) (any, error)
	done     chan struct{}
	err      error
	doneOnce sync.Once
}

type sentRequest struct {
	Method string
	Params json.RawMessage
}

func newFakeRuntime(answer func(method string, params json.RawMessage) (any, error)) *fakeRuntime {
	return &fakeRuntime{handlers: map[string]Handler{}, answer: answer, done: make(chan struct{})}
}

func (f *fakeRuntime) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	encoded, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	f.lock.Lock()
	f.sent = append(f.sent, sentRequest{method, encoded})
	f.lock.Unlock()
	select {
	case <-f.done:
		return nil, fmt.Errorf("%w: fake runtime gone", ErrChannelClosed)
	default:
	}
	result, err := f.answer(method, encoded)
	if err != nil {
		return nil, err
	}
	if raw, ok := result.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(result)
}

func (f *fakeRuntime) Handle(method string, handler Handler) {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.handlers[method] = handler
}

func (f *fakeRuntime) Done() <-chan struct{} { return f.done }
func (f *fakeRuntime) Err() error {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.err
}

func (f *fakeRuntime) close() {
	f.doneOnce.Do(func() {
		f.lock.Lock()
		f.err = fmt.Errorf("%w: the runtime's input ended", ErrChannelClosed)
		f.lock.Unlock()
		close(f.done)
	})
}

func (f *fakeRuntime) requests(method string) []sentRequest {
	f.lock.Lock()
	defer f.lock.Unlock()
	var out []sentRequest
	for _, request := range f.sent {
		if method == "" || request.Method == method {
			out = append(out, request)
		}
	}
	return out
}

// batchAnswer is the bundle's answer to one mesh/state request.
type batchAnswer struct {
	result any
	err    error
}

// sendBatch sends a mesh/state request as the runtime does; the answer arrives on the channel.
func (f *fakeRuntime) sendBatch(params any) <-chan batchAnswer {
	encoded, _ := json.Marshal(params)
	f.lock.Lock()
	handler := f.handlers[methodWatchEvents]
	f.lock.Unlock()
	answered := make(chan batchAnswer, 1)
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-f.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		result, err := handler(ctx, encoded)
		answered <- batchAnswer{result, err}
	}()
	return answered
}

// memoryStore is a bucket in memory with the runtime's revision rules, for Update tests.
type memoryStore struct {
	lock     sync.Mutex
	revision uint64
	values   map[string]storedValue
	// beforePut runs before each put is decided: a test makes another writer win here.
	beforePut func()
}

type storedValue struct {
	value    json.RawMessage
	revision uint64
}

func newMemoryStore() *memoryStore { return &memoryStore{values: map[string]storedValue{}} }

func (s *memoryStore) answer(method string, raw json.RawMessage) (any, error) {
	var params struct {
		Key      string          `json:"key"`
		Value    json.RawMessage `json:"value"`
		Revision *uint64         `json:"revision"`
		Watch    string          `json:"watch"`
	}
	_ = json.Unmarshal(raw, &params)
	if method == methodPut && s.beforePut != nil {
		s.beforePut()
	}
	s.lock.Lock()
	defer s.lock.Unlock()
	switch method {
	case methodGet:
		stored, ok := s.values[params.Key]
		if !ok {
			return json.RawMessage("null"), nil
		}
		return map[string]any{"key": params.Key, "value": stored.value, "revision": stored.revision, "updated": time.Now().UTC().Format(time.RFC3339Nano)}, nil
	case methodPut:
		current := s.values[params.Key].revision
		if params.Revision != nil && *params.Revision != current {
			data, _ := json.Marshal(map[string]any{"reason": "conflict", "revision": current})
			return nil, &RPCError{Code: -32020, Message: "conflict", Data: data}
		}
		s.revision++
		s.values[params.Key] = storedValue{params.Value, s.revision}
		return map[string]any{"revision": s.revision}, nil
	case methodDelete:
		delete(s.values, params.Key)
		s.revision++
		return map[string]any{}, nil
	}
	return nil, &RPCError{Code: -32601, Message: "method not found"}
}

func (s *memoryStore) put(key string, value any) {
	s.lock.Lock()
	defer s.lock.Unlock()
	encoded, _ := json.Marshal(value)
	s.revision++
	s.values[key] = storedValue{encoded, s.revision}
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// emptyBucketRuntime answers every verb as an empty bucket would: a put gets revision 1.
func emptyBucketRuntime() *fakeRuntime {
	return newFakeRuntime(func(method string, _ json.RawMessage) (any, error) {
		switch method {
		case methodWatch:
			return map[string]any{"watch": "w1"}, nil
		case methodPut:
			return map[string]any{"revision": 1}, nil
		case methodKeys:
			return map[string]any{"keys": []string{}}, nil
		case methodHistory:
			return map[string]any{"entries": []any{}}, nil
		case methodGet:
			return json.RawMessage("null"), nil
		}
		return map[string]any{}, nil
	})
}
