package meshstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The wire conformance suite: the same fixture files sdk-ts and runtime-state read.
var conformanceDir = filepath.Join("..", "state-protocol", "conformance")

func readFixture(t *testing.T, name string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(conformanceDir, name))
	if err != nil {
		t.Fatalf("reading the conformance fixture: %v", err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// fixtureCall is an SDK call as the fixtures describe it.
type fixtureCall struct {
	Handle      string          `json:"handle"`
	Bucket      string          `json:"bucket"`
	Op          string          `json:"op"`
	Key         string          `json:"key"`
	Value       json.RawMessage `json:"value"`
	Revision    *uint64         `json:"revision"`
	Filter      string          `json:"filter"`
	Watch       string          `json:"watch"`
	Consistency Consistency     `json:"consistency"`
}

// callResult is what a call gave back, normalised for comparison with a fixture's expectation.
type callResult struct {
	value any
	err   error
}

// perform runs a fixture call through the Go SDK's public surface.
func perform(ctx context.Context, client *Client, call fixtureCall) callResult {
	readOnly := Reads[json.RawMessage](client, call.Bucket)
	owned := State[json.RawMessage](client, call.Bucket)
	if call.Handle == "state" {
		readOnly = &owned.ReadOnlyBucket
	}
	var options []PutOption
	if call.Revision != nil {
		options = append(options, IfRevision(*call.Revision))
	}
	// A level only when the fixture names one: the calls without are the SDK's plain calls.
	var reads []ReadOption
	watches := []WatchOption{Filter(call.Filter)}
	if call.Consistency != "" {
		reads = append(reads, call.Consistency)
		watches = append(watches, call.Consistency)
	}
	switch call.Op {
	case "get":
		entry, found, err := readOnly.Get(ctx, call.Key, reads...)
		if err != nil || !found {
			return callResult{map[string]any{"absent": true}, err}
		}
		return callResult{map[string]any{"entry": map[string]any{"key": entry.Key, "value": entry.Value, "revision": entry.Revision, "updated": entry.Updated.Format(time.RFC3339Nano)}}, nil}
	case "put":
		revision, err := owned.Put(ctx, call.Key, call.Value, options...)
		return callResult{map[string]any{"revision": revision}, err}
	case "create":
		revision, err := owned.Create(ctx, call.Key, call.Value)
		return callResult{map[string]any{"revision": revision}, err}
	case "delete":
		err := owned.Delete(ctx, call.Key, options...)
		return callResult{map[string]any{"ok": true}, err}
	case "keys":
		keys, err := readOnly.Keys(ctx, call.Filter, reads...)
		return callResult{map[string]any{"keys": keys}, err}
	case "history":
		entries, err := readOnly.History(ctx, call.Key, reads...)
		var out []any
		for _, entry := range entries {
			wire := map[string]any{"type": string(entry.Type), "key": entry.Key, "revision": entry.Revision, "updated": entry.Updated.Format(time.RFC3339Nano)}
			if entry.Type == EventPut {
				wire["value"] = entry.Value
			}
			out = append(out, wire)
		}
		return callResult{map[string]any{"entries": out}, err}
	case "watch":
		err := openThenLeave(ctx, client, func(watchCtx context.Context) iter.Seq2[Event[json.RawMessage], error] {
			return readOnly.Watch(watchCtx, watches...)
		})
		return callResult{nil, err}
	case "unwatch":
		err := client.call(ctx, methodUnwatch, map[string]any{"watch": call.Watch}, nil, "", "")
		return callResult{nil, err}
	}
	panic("unknown fixture op " + call.Op)
}

// openThenLeave runs a watch until the client holds its id (its params were sent by then), then leaves it;
// a refusal, yielded at once, is returned.
func openThenLeave[T any](ctx context.Context, client *Client, watch func(context.Context) iter.Seq2[Event[T], error]) error {
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	yielded := make(chan error, 1)
	go func() {
		for _, err := range watch(watchCtx) {
			yielded <- err
			return
		}
		yielded <- nil
	}()
	for {
		client.lock.Lock()
		open := len(client.watches)
		client.lock.Unlock()
		if open > 0 {
			return nil
		}
		select {
		case err := <-yielded:
			return err
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// sameJSON compares two values by their JSON encoding, so numbers and raw messages compare as the wire does.
func sameJSON(t *testing.T, got, want any) bool {
	t.Helper()
	normalise := func(value any) any {
		encoded, err := json.Marshal(value)
		if err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		var out any
		_ = json.Unmarshal(encoded, &out)
		return out
	}
	return reflect.DeepEqual(normalise(got), normalise(want))
}

func TestConformanceReasons(t *testing.T) {
	var fixture struct {
		Reasons map[string]int `json:"reasons"`
		Limits  []string       `json:"limits"`
	}
	readFixture(t, "reasons.json", &fixture)
	if len(fixture.Reasons) != len(reasonCodes) {
		t.Fatalf("the fixture has %d reasons, the SDK %d", len(fixture.Reasons), len(reasonCodes))
	}
	for reason, code := range fixture.Reasons {
		if Reason(reason).code() != code {
			t.Errorf("reason %s: SDK code %d, fixture %d", reason, Reason(reason).code(), code)
		}
	}
	if !reflect.DeepEqual(fixture.Limits, []string{"watches", "in-flight", "line-size"}) {
		t.Errorf("limits: %v", fixture.Limits)
	}
}

type requestFixture struct {
	Name    string          `json:"name"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Verdict string          `json:"verdict"`
	Call    *fixtureCall    `json:"call"`
	Refusal *struct {
		Path    string `json:"path"`
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"refusal"`
}

func requestFixtures(t *testing.T) []requestFixture {
	t.Helper()
	var fixture struct {
		Requests []requestFixture `json:"requests"`
	}
	readFixture(t, "requests.json", &fixture)
	return fixture.Requests
}

// Every call the fixtures name sends exactly the fixture's params, or, for a refusal the SDK makes itself
// (the key rules, the secret rule, a consistency level the wire does not have), is refused with the same
// reason and sends nothing.
func TestConformanceRequests(t *testing.T) {
	requests := requestFixtures(t)
	calls := 0
	for _, request := range requests {
		if request.Call == nil {
			continue
		}
		calls++
		t.Run(request.Name, func(t *testing.T) {
			runtime := emptyBucketRuntime()
			client := Attach(runtime)
			result := perform(testContext(t), client, *request.Call)
			local := request.Verdict == "bad-key" || request.Verdict == "secret-field" || request.Verdict == "bad-request"
			sent := runtime.requests(request.Method)
			if local {
				var refused *StateError
				if !errors.As(result.err, &refused) || string(refused.Reason) != request.Verdict {
					t.Fatalf("want a local %s refusal, got %v", request.Verdict, result.err)
				}
				if len(runtime.requests("")) != 0 {
					t.Fatalf("a refused call sent %d requests", len(runtime.requests("")))
				}
				if request.Refusal != nil && (refused.Path != request.Refusal.Path || refused.Kind != request.Refusal.Kind || !strings.Contains(refused.Message, request.Refusal.Message)) {
					t.Fatalf("refusal path %q kind %q message %q, want %+v", refused.Path, refused.Kind, refused.Message, *request.Refusal)
				}
				return
			}
			if result.err != nil {
				t.Fatalf("call failed: %v", result.err)
			}
			if len(sent) == 0 {
				t.Fatalf("no %s sent", request.Method)
			}
			var got, want any
			_ = json.Unmarshal(sent[0].Params, &got)
			_ = json.Unmarshal(request.Params, &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("params\n got %s\nwant %s", sent[0].Params, request.Params)
			}
		})
	}
	if calls < 30 {
		t.Fatalf("only %d fixture calls", calls)
	}
}

// The key and filter verdicts of the fixtures, straight from CheckKey and CheckFilter.
func TestConformanceKeyRules(t *testing.T) {
	requests := requestFixtures(t)
	for _, request := range requests {
		if request.Verdict != "valid" && request.Verdict != "bad-key" {
			continue
		}
		var params struct {
			Key    *string `json:"key"`
			Filter *string `json:"filter"`
		}
		_ = json.Unmarshal(request.Params, &params)
		problem := ""
		if params.Key != nil {
			problem = CheckKey(*params.Key)
		}
		if params.Filter != nil && problem == "" {
			problem = CheckFilter(*params.Filter)
		}
		if (problem != "") != (request.Verdict == "bad-key") {
			t.Errorf("%s: verdict %s, CheckKey/CheckFilter said %q", request.Name, request.Verdict, problem)
		}
	}
}

// The secret rule's verdicts on the fixtures' values: the refused ones at the fixture's path, the rest pass.
func TestConformanceSecretRule(t *testing.T) {
	requests := requestFixtures(t)
	checked := 0
	for _, request := range requests {
		var params struct {
			Value json.RawMessage `json:"value"`
		}
		if request.Method != methodPut || json.Unmarshal(request.Params, &params) != nil || params.Value == nil {
			continue
		}
		if request.Verdict == "bad-request" {
			continue
		}
		checked++
		finding, found, err := FindSecret(params.Value)
		if err != nil {
			t.Fatalf("%s: %v", request.Name, err)
		}
		if found != (request.Verdict == "secret-field") {
			t.Errorf("%s: verdict %s, FindSecret found %v (%+v)", request.Name, request.Verdict, found, finding)
		}
		if found && (finding.Path != request.Refusal.Path || finding.Kind != request.Refusal.Kind) {
			t.Errorf("%s: found %+v, want %+v", request.Name, finding, *request.Refusal)
		}
	}
	if checked < 5 {
		t.Fatalf("only %d values checked", checked)
	}
}

// The runtime's answers, and what the SDK makes of each: a typed result, a *StateError, or a ClientError.
func TestConformanceAnswers(t *testing.T) {
	var fixture struct {
		Answers []struct {
			Name   string          `json:"name"`
			Call   fixtureCall     `json:"call"`
			Answer json.RawMessage `json:"answer"`
			Expect map[string]any  `json:"expect"`
		} `json:"answers"`
	}
	readFixture(t, "answers.json", &fixture)
	if len(fixture.Answers) < 20 {
		t.Fatalf("only %d answers", len(fixture.Answers))
	}
	for _, answer := range fixture.Answers {
		t.Run(answer.Name, func(t *testing.T) {
			var wire struct {
				Result json.RawMessage `json:"result"`
				Error  *RPCError       `json:"error"`
			}
			if err := json.Unmarshal(answer.Answer, &wire); err != nil {
				t.Fatal(err)
			}
			runtime := newFakeRuntime(func(string, json.RawMessage) (any, error) {
				if wire.Error != nil {
					return nil, wire.Error
				}
				return wire.Result, nil
			})
			result := perform(testContext(t), Attach(runtime), answer.Call)
			if client, ok := answer.Expect["client"]; ok {
				var local *ClientError
				if !errors.As(result.err, &local) || string(local.Reason) != client {
					t.Fatalf("want ClientError %v, got %#v", client, result.err)
				}
				return
			}
			if reason, ok := answer.Expect["reason"]; ok {
				var refused *StateError
				if !errors.As(result.err, &refused) {
					t.Fatalf("want a StateError, got %#v", result.err)
				}
				got := map[string]any{"reason": string(refused.Reason), "code": refused.Code, "message": refused.Message}
				for _, field := range []string{"path", "kind", "revision", "limit"} {
					if _, wanted := answer.Expect[field]; !wanted {
						continue
					}
					got[field] = map[string]any{"path": refused.Path, "kind": refused.Kind, "revision": refused.Revision, "limit": refused.Limit}[field]
				}
				if !sameJSON(t, got, answer.Expect) {
					t.Fatalf("%v: got %v, want %v", reason, got, answer.Expect)
				}
				if answer.Call.Op != "unwatch" && refused.Bucket != answer.Call.Bucket {
					t.Fatalf("bucket %q, want %q", refused.Bucket, answer.Call.Bucket)
				}
				return
			}
			if result.err != nil {
				t.Fatalf("want %v, got %v", answer.Expect, result.err)
			}
			if !sameJSON(t, result.value, answer.Expect) {
				got, _ := json.Marshal(result.value)
				t.Fatalf("got %s, want %v", got, answer.Expect)
			}
		})
	}
}

// Watch batches, and the answers the bundle gives them: {} once taken, -32602 outside the contract,
// -32040 for a watch it does not have. A valid batch's events reach the loop as the fixture holds them.
func TestConformanceBatches(t *testing.T) {
	var fixture struct {
		OpenWatch string `json:"openWatch"`
		Batches   []struct {
			Name   string          `json:"name"`
			Params json.RawMessage `json:"params"`
			Answer struct {
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code   int    `json:"code"`
					Reason string `json:"reason"`
				} `json:"error"`
			} `json:"answer"`
		} `json:"batches"`
	}
	readFixture(t, "batches.json", &fixture)
	for _, batch := range fixture.Batches {
		t.Run(batch.Name, func(t *testing.T) {
			runtime := newFakeRuntime(func(method string, _ json.RawMessage) (any, error) {
				if method == methodWatch {
					return map[string]any{"watch": fixture.OpenWatch}, nil
				}
				return map[string]any{}, nil
			})
			client := Attach(runtime)
			bucket := State[json.RawMessage](client, "notes")
			ctx := testContext(t)
			watchCtx, stop := context.WithCancel(ctx)
			defer stop()
			var seen []map[string]any
			consumed := make(chan struct{})
			go func() {
				defer close(consumed)
				for event, err := range bucket.Watch(watchCtx) {
					if err != nil {
						return
					}
					wire := map[string]any{"type": string(event.Type)}
					switch event.Type {
					case EventPut:
						wire["key"], wire["value"], wire["revision"], wire["updated"] = event.Key, event.Value, event.Revision, event.Updated.Format(time.RFC3339Nano)
					case EventDelete:
						wire["key"], wire["revision"], wire["updated"] = event.Key, event.Revision, event.Updated.Format(time.RFC3339Nano)
					case EventEnded:
						wire["reason"], wire["message"] = event.EndReason, event.Message
					}
					seen = append(seen, wire)
				}
			}()
			waitFor(t, func() bool {
				client.lock.Lock()
				defer client.lock.Unlock()
				return len(client.watches) == 1
			}, "the watch to open")
			got := <-runtime.sendBatch(batch.Params)
			if batch.Answer.Error != nil {
				var rpc *RPCError
				if !errors.As(got.err, &rpc) || rpc.Code != batch.Answer.Error.Code {
					t.Fatalf("want error %d, got %v / %v", batch.Answer.Error.Code, got.result, got.err)
				}
				if batch.Answer.Error.Reason != "" && !bytes.Contains(rpc.Data, []byte(`"reason":"`+batch.Answer.Error.Reason+`"`)) {
					t.Fatalf("want reason %s in %s", batch.Answer.Error.Reason, rpc.Data)
				}
				return
			}
			if got.err != nil {
				t.Fatalf("want a result, got %v", got.err)
			}
			var params struct {
				Events []map[string]any `json:"events"`
			}
			_ = json.Unmarshal(batch.Params, &params)
			stop()
			<-consumed
			for _, event := range params.Events {
				for field := range event {
					if !map[string]bool{"type": true, "key": true, "value": true, "revision": true, "updated": true, "reason": true, "message": true}[field] {
						delete(event, field)
					}
				}
			}
			if !sameJSON(t, seen, params.Events) {
				gotJSON, _ := json.Marshal(seen)
				t.Fatalf("the loop saw %s, want %v", gotJSON, params.Events)
			}
		})
	}
}

// The secret rule's shared cases (secrets.json, written with state-protocol's TS rule): look-alikes every
// implementation allows, and field names with the path and kind each must report.
func TestConformanceSecretCases(t *testing.T) {
	var fixture struct {
		Cases []struct {
			Why    string          `json:"why"`
			Value  json.RawMessage `json:"value"`
			Refuse bool            `json:"refuse"`
			Kind   string          `json:"kind"`
			Path   string          `json:"path"`
		} `json:"cases"`
	}
	readFixture(t, "secrets.json", &fixture)
	if len(fixture.Cases) < 100 {
		t.Fatalf("only %d cases", len(fixture.Cases))
	}
	for _, c := range fixture.Cases {
		finding, found, err := FindSecret(c.Value)
		if err != nil || found != c.Refuse || (found && (finding.Kind != c.Kind || finding.Path != c.Path)) {
			t.Errorf("%s: %s: found %v %+v (%v), want refuse %v kind %q path %q", c.Why, c.Value, found, finding, err, c.Refuse, c.Kind, c.Path)
		}
	}
}
