package meshstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestUpdateRetriesOnConflict(t *testing.T) {
	store := newMemoryStore()
	store.put("hits", 1)
	interfered := 0
	store.beforePut = func() {
		// Another writer wins the first two rounds.
		if interfered < 2 {
			interfered++
			store.put("hits", 10*interfered)
		}
	}
	counter := State[int](Attach(newFakeRuntime(store.answer)), "counter")
	rounds := 0
	updated, err := counter.Update(testContext(t), "hits", func(hits int, found bool) (int, error) {
		rounds++
		if !found {
			t.Error("the key exists")
		}
		return hits + 1, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rounds != 3 || updated.Value != 21 {
		t.Fatalf("rounds %d, value %d", rounds, updated.Value)
	}
}

func TestUpdateOfAnAbsentKeyCreatesIt(t *testing.T) {
	store := newMemoryStore()
	runtime := newFakeRuntime(store.answer)
	counter := State[int](Attach(runtime), "counter")
	updated, err := counter.Update(testContext(t), "hits", func(hits int, found bool) (int, error) {
		if found || hits != 0 {
			t.Errorf("found %v hits %d", found, hits)
		}
		return 7, nil
	})
	if err != nil || updated.Value != 7 {
		t.Fatal(updated, err)
	}
	puts := runtime.requests(methodPut)
	if !strings.Contains(string(puts[0].Params), `"revision":0`) {
		t.Fatalf("an absent key is written at revision 0: %s", puts[0].Params)
	}
}

func TestUpdateGivesUpWithTheConflict(t *testing.T) {
	store := newMemoryStore()
	store.beforePut = func() { store.put("hits", 99) }
	counter := State[int](Attach(newFakeRuntime(store.answer)), "counter")
	_, err := counter.Update(testContext(t), "hits", func(hits int, _ bool) (int, error) { return hits + 1, nil }, Attempts(3))
	var refused *StateError
	if !errors.As(err, &refused) || refused.Reason != ReasonConflict || !strings.Contains(refused.Message, "gave up after 3 attempts") {
		t.Fatalf("got %v", err)
	}
	if refused.Revision == 0 {
		t.Fatal("the conflict carries the current revision")
	}
}

func TestUpdateStopsOnTheChangeFunctionsError(t *testing.T) {
	store := newMemoryStore()
	runtime := newFakeRuntime(store.answer)
	counter := State[int](Attach(runtime), "counter")
	stop := errors.New("no thanks")
	_, err := counter.Update(testContext(t), "hits", func(int, bool) (int, error) { return 0, stop })
	if !errors.Is(err, stop) || len(runtime.requests(methodPut)) != 0 {
		t.Fatalf("got %v", err)
	}
}

func TestErrorsAsAndIs(t *testing.T) {
	data, _ := json.Marshal(map[string]any{"reason": "limit", "limit": "in-flight"})
	runtime := newFakeRuntime(func(string, json.RawMessage) (any, error) {
		return nil, &RPCError{Code: -32050, Message: "too many requests in flight", Data: data}
	})
	_, _, err := State[any](Attach(runtime), "notes").Get(testContext(t), "a")
	wrapped := fmt.Errorf("loading: %w", err)
	var refused *StateError
	if !errors.As(wrapped, &refused) || refused.Reason != ReasonLimit || refused.Limit != "in-flight" || refused.Bucket != "notes" || refused.Key != "a" {
		t.Fatalf("got %#v", err)
	}
	if !errors.Is(wrapped, &StateError{Reason: ReasonLimit}) || errors.Is(wrapped, &StateError{Reason: ReasonConflict}) {
		t.Fatal("errors.Is matches by reason")
	}
}

func TestAClosedChannelIsAClientError(t *testing.T) {
	runtime := newFakeRuntime(func(string, json.RawMessage) (any, error) { return nil, nil })
	runtime.close()
	_, _, err := State[any](Attach(runtime), "notes").Get(testContext(t), "a")
	var local *ClientError
	if !errors.As(err, &local) || local.Reason != ClientClosed {
		t.Fatalf("got %v", err)
	}
}

// upperCodec stores strings upper-cased and refuses to read anything that is not.
type upperCodec struct{}

func (upperCodec) Encode(value string) (json.RawMessage, error) {
	return json.Marshal(strings.ToUpper(value))
}
func (upperCodec) Decode(data json.RawMessage) (string, error) {
	var text string
	if err := json.Unmarshal(data, &text); err != nil {
		return "", err
	}
	if text != strings.ToUpper(text) {
		return "", errors.New("not upper-case")
	}
	return strings.ToLower(text), nil
}

func TestACodecHookBothWays(t *testing.T) {
	store := newMemoryStore()
	bucket := State(Attach(newFakeRuntime(store.answer)), "notes", WithCodec[string](upperCodec{}))
	ctx := testContext(t)
	if _, err := bucket.Put(ctx, "a", "hello"); err != nil {
		t.Fatal(err)
	}
	if string(store.values["a"].value) != `"HELLO"` {
		t.Fatalf("stored %s", store.values["a"].value)
	}
	entry, found, err := bucket.Get(ctx, "a")
	if err != nil || !found || entry.Value != "hello" {
		t.Fatal(entry, found, err)
	}
	store.put("b", "lower")
	_, _, err = bucket.Get(ctx, "b")
	var local *ClientError
	if !errors.As(err, &local) || local.Reason != ClientInvalidStoredValue || local.Key != "b" {
		t.Fatalf("got %v", err)
	}
}

func TestLocalRefusalsSendNothing(t *testing.T) {
	runtime := newFakeRuntime(func(string, json.RawMessage) (any, error) { return map[string]any{"revision": 1}, nil })
	bucket := State[any](Attach(runtime), "notes")
	ctx := testContext(t)
	cases := []struct {
		name   string
		put    func() error
		reason Reason
	}{
		{"a bad key", func() error { _, err := bucket.Put(ctx, "a..b", 1); return err }, ReasonBadKey},
		{"a bad filter", func() error { _, err := bucket.Keys(ctx, "a*"); return err }, ReasonBadKey},
		{"over 256 KiB", func() error { _, err := bucket.Put(ctx, "a", strings.Repeat("x", MaxValueBytes)); return err }, ReasonTooLarge},
		{"a credential field", func() error { _, err := bucket.Put(ctx, "a", map[string]any{"apiKey": "x"}); return err }, ReasonSecretField},
	}
	for _, c := range cases {
		var refused *StateError
		if err := c.put(); !errors.As(err, &refused) || refused.Reason != c.reason || refused.Code != c.reason.code() {
			t.Errorf("%s: got %v", c.name, err)
		}
	}
	if _, err := bucket.Put(ctx, "a", func() {}); err == nil {
		t.Error("a value that is not JSON is refused")
	}
	if sent := runtime.requests(""); len(sent) != 0 {
		t.Fatalf("sent %d requests", len(sent))
	}
}

// watchRuntime answers watch with w1 and unwatch with {}, counting unwatches.
// attachWatchRuntime attaches a client to watchRuntime; the counter is how many unwatches it answered.
func attachWatchRuntime() (*fakeRuntime, *Client, *atomic.Int32) {
	unwatched := new(atomic.Int32)
	runtime := watchRuntime(unwatched)
	return runtime, Attach(runtime), unwatched
}

func watchRuntime(unwatched *atomic.Int32) *fakeRuntime {
	return newFakeRuntime(func(method string, _ json.RawMessage) (any, error) {
		switch method {
		case methodWatch:
			return map[string]any{"watch": "w1"}, nil
		case methodUnwatch:
			unwatched.Add(1)
		}
		return map[string]any{}, nil
	})
}

// watchLoop runs a loop over a watch of the client's bucket "notes" until stop says so or the watch ends,
// then hands over every event it saw; it returns once the watch is open.
func watchLoop(t *testing.T, client *Client, stop func(Event[int]) bool) <-chan []Event[int] {
	t.Helper()
	ctx := testContext(t)
	seen := make(chan []Event[int], 1)
	go func() {
		var events []Event[int]
		for event := range State[int](client, "notes").Watch(ctx) {
			events = append(events, event)
			if stop(event) {
				break
			}
		}
		seen <- events
	}()
	waitForWatches(t, client)
	return seen
}

func waitForWatches(t *testing.T, client *Client) {
	t.Helper()
	waitFor(t, func() bool { client.lock.Lock(); defer client.lock.Unlock(); return len(client.watches) == 1 }, "the watch")
}

func untilCurrent(event Event[int]) bool { return event.Type == EventCurrent }
func untilTheEnd(Event[int]) bool        { return false }

func event(kind, key string, revision int) map[string]any {
	return map[string]any{"type": kind, "key": key, "value": revision, "revision": revision, "updated": "2026-11-30T10:00:00Z"}
}

// The runtime's next batch waits for the answer to the one before, and that answer waits for the loop.
func TestWatchAnswersABatchOnlyOnceTheLoopTookIt(t *testing.T) {
	runtime, client, _ := attachWatchRuntime()
	bucket := State[int](client, "notes")
	ctx := testContext(t)
	taken := make(chan Event[int])
	release := make(chan struct{})
	go func() {
		for event, err := range bucket.Watch(ctx) {
			if err != nil {
				return
			}
			taken <- event
			<-release
		}
	}()
	waitForWatches(t, client)
	answered := runtime.sendBatch(map[string]any{"watch": "w1", "events": []any{event("put", "a", 1), event("put", "b", 2)}})
	if got := <-taken; got.Key != "a" {
		t.Fatal(got)
	}
	release <- struct{}{}
	if got := <-taken; got.Key != "b" {
		t.Fatal(got)
	}
	select {
	case <-answered:
		t.Fatal("answered while the loop still handles the batch's last event")
	default:
	}
	release <- struct{}{}
	if got := <-answered; got.err != nil {
		t.Fatal(got.err)
	}
}

func TestLeavingAWatchLoopUnwatches(t *testing.T) {
	runtime, client, unwatched := attachWatchRuntime()
	done := watchLoop(t, client, untilCurrent)
	<-runtime.sendBatch(map[string]any{"watch": "w1", "events": []any{event("put", "a", 1), map[string]any{"type": "current"}, event("put", "b", 2)}})
	<-done
	if unwatched.Load() != 1 || len(client.watches) != 0 || len(client.open) != 0 {
		t.Fatalf("unwatched %d, watches %d", unwatched.Load(), len(client.watches))
	}
}

func TestAWatchTheRuntimeEndedIsNotUnwatched(t *testing.T) {
	runtime, client, unwatched := attachWatchRuntime()
	done := watchLoop(t, client, untilTheEnd)
	<-runtime.sendBatch(map[string]any{"watch": "w1", "events": []any{map[string]any{"type": "ended", "reason": "denied", "message": "no"}, event("put", "late", 9)}})
	var seen []EventType
	for _, event := range <-done {
		seen = append(seen, event.Type)
	}
	if fmt.Sprint(seen) != "[ended]" || unwatched.Load() != 0 {
		t.Fatalf("seen %v, unwatched %d", seen, unwatched.Load())
	}
}

func TestARefusedWatchYieldsItsError(t *testing.T) {
	data, _ := json.Marshal(map[string]any{"reason": "not-issued"})
	runtime := newFakeRuntime(func(string, json.RawMessage) (any, error) {
		return nil, &RPCError{Code: -32010, Message: "bucket nope is not issued", Data: data}
	})
	count := 0
	for _, err := range Reads[any](Attach(runtime), "m.nope").Watch(testContext(t)) {
		count++
		var refused *StateError
		if !errors.As(err, &refused) || refused.Reason != ReasonNotIssued {
			t.Fatal(err)
		}
	}
	if count != 1 {
		t.Fatalf("yielded %d times", count)
	}
}

// runtime-state answers watch once the first values are on their way: a batch may overtake the answer.
func TestABatchBeforeTheWatchAnswerIsHeldForIt(t *testing.T) {
	answerWatch := make(chan struct{})
	var runtime *fakeRuntime
	batchAnswered := make(chan batchAnswer, 1)
	runtime = newFakeRuntime(func(method string, _ json.RawMessage) (any, error) {
		if method == methodWatch {
			go func() {
				batchAnswered <- <-runtime.sendBatch(map[string]any{"watch": "w7", "events": []any{event("put", "a", 1)}})
			}()
			<-answerWatch
			return map[string]any{"watch": "w7"}, nil
		}
		return map[string]any{}, nil
	})
	client := Attach(runtime)
	got := make(chan Event[int], 1)
	go func() {
		for event := range State[int](client, "notes").Watch(testContext(t)) {
			got <- event
			return
		}
	}()
	waitFor(t, func() bool { client.lock.Lock(); defer client.lock.Unlock(); return client.starting == 1 }, "the watch to start")
	close(answerWatch)
	if event := <-got; event.Key != "a" {
		t.Fatal(event)
	}
	if answer := <-batchAnswered; answer.err != nil {
		t.Fatal(answer.err)
	}
}

func TestAClosedChannelEndsEveryWatch(t *testing.T) {
	runtime, client, unwatched := attachWatchRuntime()
	done := watchLoop(t, client, untilTheEnd)
	runtime.close()
	seen := <-done
	last := seen[len(seen)-1]
	if last.Type != EventEnded || last.EndReason != "closed" || unwatched.Load() != 0 {
		t.Fatalf("last %+v", last)
	}
}

func TestAStoredValueTheCodecRefusesIsAnInvalidEvent(t *testing.T) {
	runtime, client, _ := attachWatchRuntime()
	done := watchLoop(t, client, untilCurrent)
	bad := event("put", "bad", 2)
	bad["value"] = "not a number"
	<-runtime.sendBatch(map[string]any{"watch": "w1", "events": []any{event("put", "a", 1), bad, map[string]any{"type": "current"}}})
	seen := <-done
	var local *ClientError
	if len(seen) != 3 || seen[1].Type != EventInvalid || string(seen[1].Stored) != `"not a number"` || !errors.As(seen[1].Err, &local) || local.Reason != ClientInvalidStoredValue {
		t.Fatalf("seen %+v", seen)
	}
}

func TestMirrorFollowsTheBucketForConcurrentReaders(t *testing.T) {
	runtime, client, unwatched := attachWatchRuntime()
	ctx := testContext(t)
	mirror := State[int](client, "notes").Mirror(ctx)
	waitForWatches(t, client)
	var readers sync.WaitGroup
	stopReading := make(chan struct{})
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stopReading:
					return
				default:
					_ = mirror.Snapshot()
					_, _ = mirror.Get("a")
				}
			}
		}()
	}
	<-runtime.sendBatch(map[string]any{"watch": "w1", "events": []any{event("put", "a", 1), event("put", "b", 2), map[string]any{"type": "current"}}})
	if err := mirror.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	go runtime.sendBatch(map[string]any{"watch": "w1", "events": []any{event("delete", "a", 3), event("put", "c", 4)}})
	if err := mirror.Until(ctx, func(values map[string]int) bool { _, ok := values["c"]; return ok }); err != nil {
		t.Fatal(err)
	}
	close(stopReading)
	readers.Wait()
	if fmt.Sprint(mirror.Snapshot()) != "map[b:2 c:4]" || fmt.Sprint(mirror.Keys()) != "[b c]" {
		t.Fatalf("mirror %v", mirror.Snapshot())
	}
	if err := mirror.Stop(ctx); err != nil || unwatched.Load() != 1 {
		t.Fatalf("stop %v, unwatched %d", err, unwatched.Load())
	}
	if last, err := mirror.End(); err != nil || last.EndReason != "closed" {
		t.Fatalf("end %+v %v", last, err)
	}
	if err := mirror.Until(ctx, func(values map[string]int) bool { return len(values) > 5 }); err == nil {
		t.Fatal("until after the end is watch-ended")
	}
}

func TestAMirrorOfARefusedWatchFailsItsSync(t *testing.T) {
	data, _ := json.Marshal(map[string]any{"reason": "not-issued"})
	runtime := newFakeRuntime(func(string, json.RawMessage) (any, error) {
		return nil, &RPCError{Code: -32010, Message: "not issued", Data: data}
	})
	mirror := Reads[any](Attach(runtime), "m.nope").Mirror(context.Background())
	var refused *StateError
	if err := mirror.WaitSynced(testContext(t)); !errors.As(err, &refused) || refused.Reason != ReasonNotIssued {
		t.Fatal(err)
	}
}

func TestCloseUnwatchesEveryWatch(t *testing.T) {
	_, client, unwatched := attachWatchRuntime()
	ctx := testContext(t)
	first := State[int](client, "notes").Mirror(ctx)
	waitForWatches(t, client)
	if err := client.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-first.Ended()
	if unwatched.Load() != 1 {
		t.Fatalf("unwatched %d", unwatched.Load())
	}
}
