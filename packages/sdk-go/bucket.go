package meshstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Entry is a key's current value. Revision is the bucket's sequence number, for IfRevision.
type Entry[T any] struct {
	Key      string
	Value    T
	Revision uint64
	Updated  time.Time
}

// Updated is what Update wrote.
type Updated[T any] struct {
	Key      string
	Value    T
	Revision uint64
}

// ReadOnlyBucket is a bucket the module reads (its manifest's reads, as "<module>.<name>"). It has no
// write method, so a write to a read bucket does not compile.
type ReadOnlyBucket[T any] struct {
	client *Client
	name   string
	codec  Codec[T]
}

// Bucket is a bucket the module owns (its manifest's state): every read method, and the writes.
type Bucket[T any] struct {
	ReadOnlyBucket[T]
}

func newReadOnly[T any](client *Client, name string, options []Option[T]) ReadOnlyBucket[T] {
	settings := handleOptions[T]{codec: JSONCodec[T]{}}
	for _, option := range options {
		option(&settings)
	}
	return ReadOnlyBucket[T]{client: client, name: name, codec: settings.codec}
}

// State returns the handle of a bucket the module declares in state.
func State[T any](client *Client, name string, options ...Option[T]) *Bucket[T] {
	return &Bucket[T]{newReadOnly(client, name, options)}
}

// Reads returns the read-only handle of a bucket the module declares in reads, as "<module>.<name>".
func Reads[T any](client *Client, reference string, options ...Option[T]) *ReadOnlyBucket[T] {
	handle := newReadOnly(client, reference, options)
	return &handle
}

// Name is the name the module uses for the bucket.
func (b *ReadOnlyBucket[T]) Name() string { return b.name }

func (b *ReadOnlyBucket[T]) checkKey(key string) error {
	if problem := CheckKey(key); problem != "" {
		return newStateError(ReasonBadKey, problem, b.name, key)
	}
	return nil
}

type wireEntry struct {
	Key      string          `json:"key"`
	Value    json.RawMessage `json:"value"`
	Revision uint64          `json:"revision"`
	Updated  string          `json:"updated"`
}

// Get returns the key's current entry; found is false when the key is absent or deleted. A Consistency
// option sets how current it must be.
func (b *ReadOnlyBucket[T]) Get(ctx context.Context, key string, options ...ReadOption) (entry Entry[T], found bool, err error) {
	if err := b.checkKey(key); err != nil {
		return entry, false, err
	}
	params := map[string]any{"bucket": b.name, "key": key}
	if err := readParams(params, options, b.name, key); err != nil {
		return entry, false, err
	}
	var wire *wireEntry
	if err := b.client.call(ctx, methodGet, params, &wire, b.name, key); err != nil {
		return entry, false, err
	}
	if wire == nil {
		return entry, false, nil
	}
	value, err := b.codec.Decode(wire.Value)
	if err != nil {
		return entry, false, &ClientError{Reason: ClientInvalidStoredValue, Message: fmt.Sprintf("stored value of key %s in bucket %s does not decode: %v", key, b.name, err), Bucket: b.name, Key: key, Cause: err}
	}
	return Entry[T]{Key: wire.Key, Value: value, Revision: wire.Revision, Updated: parseUpdated(wire.Updated)}, true, nil
}

// Keys returns the current keys (never deleted ones); filter may use * and > as whole tokens ("" for all).
// A Consistency option sets how current the listing must be.
func (b *ReadOnlyBucket[T]) Keys(ctx context.Context, filter string, options ...ReadOption) ([]string, error) {
	params := map[string]any{"bucket": b.name}
	if filter != "" {
		if problem := CheckFilter(filter); problem != "" {
			return nil, newStateError(ReasonBadKey, problem, b.name, "")
		}
		params["filter"] = filter
	}
	if err := readParams(params, options, b.name, ""); err != nil {
		return nil, err
	}
	var result struct {
		Keys []string `json:"keys"`
	}
	if err := b.client.call(ctx, methodKeys, params, &result, b.name, ""); err != nil {
		return nil, err
	}
	if result.Keys == nil {
		return nil, &ClientError{Reason: ClientProtocol, Message: "the runtime's answer to keys has no keys", Bucket: b.name}
	}
	return result.Keys, nil
}

// History returns every kept revision of the key, oldest first: EventPut, EventDelete or EventInvalid. A
// Consistency option sets how current it must be.
func (b *ReadOnlyBucket[T]) History(ctx context.Context, key string, options ...ReadOption) ([]Event[T], error) {
	if err := b.checkKey(key); err != nil {
		return nil, err
	}
	params := map[string]any{"bucket": b.name, "key": key}
	if err := readParams(params, options, b.name, key); err != nil {
		return nil, err
	}
	var result struct {
		Entries []wireEvent `json:"entries"`
	}
	if err := b.client.call(ctx, methodHistory, params, &result, b.name, key); err != nil {
		return nil, err
	}
	entries := make([]Event[T], 0, len(result.Entries))
	for _, wire := range result.Entries {
		entries = append(entries, decodeEvent(b.codec, b.name, wire))
	}
	return entries, nil
}

// PutOption conditions a write.
type PutOption func(*writeOptions)

type writeOptions struct {
	revision *uint64
}

// IfRevision writes (or deletes) only if the key's last revision is revision; 0 means only if absent.
func IfRevision(revision uint64) PutOption {
	return func(options *writeOptions) { options.revision = &revision }
}

// Put writes the value and returns its revision. The value is checked here first with the runtime's own
// rules (key, size, the secret rule), so a refusal comes early and typed; the runtime stays the authority.
func (b *Bucket[T]) Put(ctx context.Context, key string, value T, options ...PutOption) (uint64, error) {
	if err := b.checkKey(key); err != nil {
		return 0, err
	}
	encoded, err := b.codec.Encode(value)
	if err != nil {
		return 0, &ClientError{Reason: ClientInvalidValue, Message: fmt.Sprintf("value for key %s in bucket %s does not encode, nothing was written: %v", key, b.name, err), Bucket: b.name, Key: key, Cause: err}
	}
	if err := checkValue(b.name, key, encoded); err != nil {
		return 0, err
	}
	settings := writeOptions{}
	for _, option := range options {
		option(&settings)
	}
	params := map[string]any{"bucket": b.name, "key": key, "value": encoded}
	if settings.revision != nil {
		params["revision"] = *settings.revision
	}
	var result struct {
		Revision *uint64 `json:"revision"`
	}
	if err := b.client.call(ctx, methodPut, params, &result, b.name, key); err != nil {
		return 0, err
	}
	if result.Revision == nil {
		return 0, &ClientError{Reason: ClientProtocol, Message: "the runtime's answer to put has no revision", Bucket: b.name, Key: key}
	}
	return *result.Revision, nil
}

// Create writes only if the key is absent (a deleted key counts as absent); a conflict otherwise.
func (b *Bucket[T]) Create(ctx context.Context, key string, value T) (uint64, error) {
	return b.Put(ctx, key, value, IfRevision(0))
}

// Delete deletes the key (with IfRevision, only if its last revision is that one). Deleting an absent
// key succeeds.
func (b *Bucket[T]) Delete(ctx context.Context, key string, options ...PutOption) error {
	if err := b.checkKey(key); err != nil {
		return err
	}
	settings := writeOptions{}
	for _, option := range options {
		option(&settings)
	}
	params := map[string]any{"bucket": b.name, "key": key}
	if settings.revision != nil {
		params["revision"] = *settings.revision
	}
	return b.client.call(ctx, methodDelete, params, nil, b.name, key)
}

// defaultUpdateAttempts is how many read-modify-write rounds Update tries before it gives up.
const defaultUpdateAttempts = 30

const (
	firstBackoff = 5 * time.Millisecond
	maxBackoff   = 250 * time.Millisecond
)

// UpdateOption tunes Update.
type UpdateOption func(*updateOptions)

type updateOptions struct{ attempts int }

// Attempts sets how many read-modify-write rounds Update tries (default 30).
func Attempts(attempts int) UpdateOption {
	return func(options *updateOptions) { options.attempts = max(1, attempts) }
}

// Update reads the key, calls change with its value (found is false when absent), and writes the result
// only if nobody wrote in between; on a conflict it reads again after a random pause (5 ms doubling to
// 250 ms), up to Attempts times, then returns the conflict. change may run more than once: keep it free
// of side effects. An error from change ends the update with that error.
func (b *Bucket[T]) Update(ctx context.Context, key string, change func(current T, found bool) (T, error), options ...UpdateOption) (Updated[T], error) {
	settings := updateOptions{attempts: defaultUpdateAttempts}
	for _, option := range options {
		option(&settings)
	}
	var last *StateError
	for attempt := 1; attempt <= settings.attempts; attempt++ {
		current, found, err := b.Get(ctx, key)
		if err != nil {
			return Updated[T]{}, err
		}
		value, err := change(current.Value, found)
		if err != nil {
			return Updated[T]{}, err
		}
		revision, err := b.Put(ctx, key, value, IfRevision(current.Revision))
		if err == nil {
			return Updated[T]{Key: key, Value: value, Revision: revision}, nil
		}
		var refusal *StateError
		if !errors.As(err, &refusal) || refusal.Reason != ReasonConflict {
			return Updated[T]{}, err
		}
		last = refusal
		if attempt < settings.attempts {
			// Writers that collided would collide again in lockstep: a random pause in a doubling window.
			window := min(maxBackoff, firstBackoff<<min(attempt-1, 16))
			select {
			case <-time.After(rand.N(window)):
			case <-ctx.Done():
				return Updated[T]{}, ctx.Err()
			}
		}
	}
	gaveUp := newStateError(ReasonConflict, fmt.Sprintf("update of key %s in bucket %s gave up after %d attempts: another writer changed it each time", key, b.name, settings.attempts), b.name, key)
	gaveUp.Revision = last.Revision
	return Updated[T]{}, gaveUp
}
