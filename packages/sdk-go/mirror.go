package meshstate

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// Mirror is a live, read-only copy of a bucket's current values — an informer's cache — kept current by
// a watch it consumes itself. It is safe for concurrent readers.
type Mirror[T any] struct {
	lock    sync.RWMutex
	values  map[string]T
	invalid map[string]Event[T]
	changed chan struct{}
	synced  chan struct{}
	ended   chan struct{}
	last    Event[T]
	err     error
	cancel  context.CancelFunc
	stopped atomic.Bool
}

// Mirror starts following the bucket (filter with Filter, set how current its snapshot must be with a
// Consistency). ctx bounds the mirror's life; Stop ends it.
func (b *ReadOnlyBucket[T]) Mirror(ctx context.Context, options ...WatchOption) *Mirror[T] {
	ctx, cancel := context.WithCancel(ctx)
	mirror := &Mirror[T]{
		values:  map[string]T{},
		invalid: map[string]Event[T]{},
		changed: make(chan struct{}),
		synced:  make(chan struct{}),
		ended:   make(chan struct{}),
		cancel:  cancel,
	}
	go mirror.follow(b.Watch(ctx, options...))
	return mirror
}

func (m *Mirror[T]) follow(watch func(func(Event[T], error) bool)) {
	last := Event[T]{Type: EventEnded, EndReason: "closed", Message: "the mirror was stopped"}
	var failure error
	for event, err := range watch {
		if err != nil {
			if !(m.stopped.Load() && errors.Is(err, context.Canceled)) {
				failure = err
				last.EndReason, last.Message = "internal", err.Error()
			}
			break
		}
		m.lock.Lock()
		switch event.Type {
		case EventPut:
			m.values[event.Key] = event.Value
			delete(m.invalid, event.Key)
		case EventDelete:
			delete(m.values, event.Key)
			delete(m.invalid, event.Key)
		case EventInvalid:
			delete(m.values, event.Key)
			m.invalid[event.Key] = event
		case EventCurrent:
			close(m.synced)
		case EventEnded:
			last = event
		}
		close(m.changed)
		m.changed = make(chan struct{})
		m.lock.Unlock()
	}
	m.lock.Lock()
	m.last = last
	m.err = failure
	m.lock.Unlock()
	close(m.ended)
}

// Get returns the key's current value.
func (m *Mirror[T]) Get(key string) (T, bool) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	value, ok := m.values[key]
	return value, ok
}

// Len is how many keys hold a value.
func (m *Mirror[T]) Len() int {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return len(m.values)
}

// Keys returns the keys holding a value, sorted.
func (m *Mirror[T]) Keys() []string {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return slices.Sorted(maps.Keys(m.values))
}

// Snapshot returns a copy of the current values.
func (m *Mirror[T]) Snapshot() map[string]T {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return maps.Clone(m.values)
}

// Invalid returns the keys whose stored value the codec refused, with their EventInvalid.
func (m *Mirror[T]) Invalid() map[string]Event[T] {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return maps.Clone(m.invalid)
}

// Synced is closed at the current marker: the mirror then holds every value that existed when it started.
func (m *Mirror[T]) Synced() <-chan struct{} { return m.synced }

// Ended is closed when the mirror stops following the bucket; End then says why.
func (m *Mirror[T]) Ended() <-chan struct{} { return m.ended }

// End is the mirror's last event (EventEnded) and, when the watch itself was refused, its error.
func (m *Mirror[T]) End() (Event[T], error) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return m.last, m.err
}

// WaitSynced waits for the current marker. It returns the watch's refusal, or a ClientError
// (watch-ended) when the watch ended first.
func (m *Mirror[T]) WaitSynced(ctx context.Context) error {
	select {
	case <-m.synced:
		return nil
	case <-m.ended:
		select {
		case <-m.synced:
			return nil
		default:
		}
		last, err := m.End()
		if err != nil {
			return err
		}
		return &ClientError{Reason: ClientWatchEnded, Message: "the watch ended before its current values arrived: " + last.Message}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Until waits until condition holds, checked now and after every change; condition reads the values
// under the mirror's lock and must not keep the map. A ClientError (watch-ended) if the mirror ends first.
func (m *Mirror[T]) Until(ctx context.Context, condition func(values map[string]T) bool) error {
	for {
		m.lock.RLock()
		holds := condition(m.values)
		changed := m.changed
		m.lock.RUnlock()
		if holds {
			return nil
		}
		select {
		case <-changed:
		case <-m.ended:
			m.lock.RLock()
			holds := condition(m.values)
			m.lock.RUnlock()
			if holds {
				return nil
			}
			last, _ := m.End()
			return &ClientError{Reason: ClientWatchEnded, Message: "the mirror ended: " + last.Message}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Stop stops following the bucket and returns once the watch is unwatched (its consumer deleted).
func (m *Mirror[T]) Stop(ctx context.Context) error {
	m.stopped.Store(true)
	m.cancel()
	select {
	case <-m.ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
