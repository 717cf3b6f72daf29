package meshstate

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"testing"
)

// Each read sends the level it was given, and no field at all without one (the runtime's default).
func TestReadsSendTheirConsistency(t *testing.T) {
	reads := map[string]struct {
		method string
		read   func(ctx context.Context, bucket *ReadOnlyBucket[int], level []Consistency) error
		params string // without the level
	}{
		"get": {methodGet, func(ctx context.Context, b *ReadOnlyBucket[int], level []Consistency) error {
			_, _, err := b.Get(ctx, "all.a", readOptionsOf(level)...)
			return err
		}, `{"bucket":"notes","key":"all.a"}`},
		"keys": {methodKeys, func(ctx context.Context, b *ReadOnlyBucket[int], level []Consistency) error {
			_, err := b.Keys(ctx, "all.*", readOptionsOf(level)...)
			return err
		}, `{"bucket":"notes","filter":"all.*"}`},
		"history": {methodHistory, func(ctx context.Context, b *ReadOnlyBucket[int], level []Consistency) error {
			_, err := b.History(ctx, "all.a", readOptionsOf(level)...)
			return err
		}, `{"bucket":"notes","key":"all.a"}`},
		"watch": {methodWatch, func(ctx context.Context, b *ReadOnlyBucket[int], level []Consistency) error {
			options := []WatchOption{Filter("all.>")}
			for _, l := range level {
				options = append(options, l)
			}
			return openThenLeave(ctx, b.client, func(watchCtx context.Context) iter.Seq2[Event[int], error] {
				return b.Watch(watchCtx, options...)
			})
		}, `{"bucket":"notes","filter":"all.>"}`},
	}
	levels := []struct {
		name  string
		level []Consistency
		field string
	}{
		{"absent", nil, ""},
		{"empty", []Consistency{""}, ""},
		{"session", []Consistency{ConsistencySession}, `"session"`},
		{"strong", []Consistency{ConsistencyStrong}, `"strong"`},
		{"local", []Consistency{ConsistencyLocal}, `"local"`},
		{"the last given", []Consistency{ConsistencyLocal, ConsistencyStrong}, `"strong"`},
	}
	for name, read := range reads {
		for _, level := range levels {
			t.Run(name+" "+level.name, func(t *testing.T) {
				runtime := emptyBucketRuntime()
				client := Attach(runtime)
				if err := read.read(testContext(t), Reads[int](client, "notes"), level.level); err != nil {
					t.Fatalf("read failed: %v", err)
				}
				want := read.params
				if level.field != "" {
					want = strings.TrimSuffix(want, "}") + `,"consistency":` + level.field + "}"
				}
				sent := runtime.requests(read.method)
				if len(sent) != 1 || !sameJSON(t, json.RawMessage(sent[0].Params), json.RawMessage(want)) {
					t.Fatalf("sent %v, want %s", sent, want)
				}
			})
		}
	}
}

// A level the wire does not have is refused here, as the runtime would refuse it, and nothing is sent.
func TestAnUnknownConsistencyIsRefusedBeforeSending(t *testing.T) {
	for name, read := range map[string]func(ctx context.Context, bucket *ReadOnlyBucket[int]) error{
		"get": func(ctx context.Context, b *ReadOnlyBucket[int]) error {
			_, _, err := b.Get(ctx, "k", Consistency("eventual"))
			return err
		},
		"keys": func(ctx context.Context, b *ReadOnlyBucket[int]) error {
			_, err := b.Keys(ctx, "", Consistency("Strong"))
			return err
		},
		"history": func(ctx context.Context, b *ReadOnlyBucket[int]) error {
			_, err := b.History(ctx, "k", Consistency("linearizable"))
			return err
		},
		"watch": func(ctx context.Context, b *ReadOnlyBucket[int]) error {
			for _, err := range b.Watch(ctx, Consistency("eventual")) {
				return err
			}
			return nil
		},
		"mirror": func(ctx context.Context, b *ReadOnlyBucket[int]) error {
			return b.Mirror(ctx, Consistency("eventual")).WaitSynced(ctx)
		},
	} {
		t.Run(name, func(t *testing.T) {
			runtime := emptyBucketRuntime()
			err := read(testContext(t), Reads[int](Attach(runtime), "notes"))
			var refused *StateError
			if !errors.As(err, &refused) || refused.Reason != ReasonBadRequest || refused.Code != -32602 || refused.Path != "consistency" || refused.Bucket != "notes" {
				t.Fatalf("want a bad-request at consistency, got %#v", err)
			}
			if !strings.Contains(refused.Message, `consistency must be one of "session", "strong", "local"`) {
				t.Fatalf("the message does not name the levels: %s", refused.Message)
			}
			if sent := runtime.requests(""); len(sent) != 0 {
				t.Fatalf("a refused read sent %v", sent)
			}
		})
	}
}

// A mirror's snapshot is as current as its level asks.
func TestTheMirrorSendsItsConsistency(t *testing.T) {
	runtime, client, _ := attachWatchRuntime()
	ctx := testContext(t)
	mirror := State[int](client, "notes").Mirror(ctx, Filter("all.>"), ConsistencyStrong)
	defer func() { _ = mirror.Stop(ctx) }()
	waitForWatches(t, client)
	sent := runtime.requests(methodWatch)
	if len(sent) != 1 || !sameJSON(t, json.RawMessage(sent[0].Params), json.RawMessage(`{"bucket":"notes","filter":"all.>","consistency":"strong"}`)) {
		t.Fatalf("sent %v", sent)
	}
}

func readOptionsOf(levels []Consistency) []ReadOption {
	options := make([]ReadOption, 0, len(levels))
	for _, level := range levels {
		options = append(options, level)
	}
	return options
}
