package meshstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"
)

// unwatchTimeout bounds the unwatch sent when an iteration ends, whatever the caller's context says.
const unwatchTimeout = 10 * time.Second

type heldBatch struct {
	events []wireEvent
	taken  chan struct{}
}

// watchStream is one watch on the wire: batches in, one consumer, and the unwatch when it is left.
type watchStream struct {
	client   *Client
	batches  chan heldBatch
	stopped  chan struct{}
	stopOnce sync.Once
	gone     chan struct{}
	goneOnce sync.Once
	goneWhy  error
	started  chan struct{}
	id       string
	endedBy  bool // the runtime ended it: nothing to unwatch
	stopErr  error
	stopDone chan struct{}
}

func (c *Client) openWatch(ctx context.Context, bucket string, options watchOptions) (*watchStream, error) {
	stream := &watchStream{
		client:   c,
		batches:  make(chan heldBatch),
		stopped:  make(chan struct{}),
		gone:     make(chan struct{}),
		started:  make(chan struct{}),
		stopDone: make(chan struct{}),
	}
	params := map[string]any{"bucket": bucket}
	if options.filter != "" {
		if problem := CheckFilter(options.filter); problem != "" {
			return nil, newStateError(ReasonBadKey, problem, bucket, "")
		}
		params["filter"] = options.filter
	}
	if err := withConsistency(params, options.consistency, bucket, ""); err != nil {
		return nil, err
	}
	c.lock.Lock()
	c.starting++
	c.open[stream] = struct{}{}
	c.lock.Unlock()
	var result struct {
		Watch string `json:"watch"`
	}
	err := c.call(ctx, methodWatch, params, &result, bucket, "")
	c.lock.Lock()
	c.starting--
	if err == nil && result.Watch == "" {
		err = &ClientError{Reason: ClientProtocol, Message: "the runtime's answer to watch has no id", Bucket: bucket}
	}
	if err == nil {
		stream.id = result.Watch
		c.watches[result.Watch] = stream
	} else {
		delete(c.open, stream)
	}
	c.notifyChanged()
	c.lock.Unlock()
	close(stream.started)
	if err != nil {
		return nil, err
	}
	return stream, nil
}

// deliver hands a batch to the consumer and returns once it has taken every event (or the watch stopped).
func (s *watchStream) deliver(ctx context.Context, raw json.RawMessage) error {
	var events []wireEvent
	if err := json.Unmarshal(raw, &events); err != nil {
		return &RPCError{Code: -32602, Message: "invalid mesh/state params: " + err.Error()}
	}
	for index, event := range events {
		if event.Type == "ended" {
			// ended is the last event by contract; anything after it is dropped.
			events = events[:index+1]
			s.client.detach(s, true)
			break
		}
	}
	batch := heldBatch{events: events, taken: make(chan struct{})}
	select {
	case s.batches <- batch:
	case <-s.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-batch.taken:
	case <-s.stopped:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (c *Client) detach(stream *watchStream, endedByRuntime bool) {
	c.lock.Lock()
	defer c.lock.Unlock()
	if endedByRuntime {
		stream.endedBy = true
	}
	if c.watches[stream.id] == stream {
		delete(c.watches, stream.id)
	}
	delete(c.open, stream)
}

func (s *watchStream) connectionClosed(why error) {
	s.goneOnce.Do(func() {
		s.goneWhy = why
		close(s.gone)
	})
}

// stop unwatches once: the runtime deletes the consumer before it answers.
func (s *watchStream) stop(ctx context.Context) error {
	first := false
	s.stopOnce.Do(func() {
		first = true
		close(s.stopped)
	})
	if !first {
		select {
		case <-s.stopDone:
			return s.stopErr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer close(s.stopDone)
	s.client.lock.Lock()
	endedBy := s.endedBy
	s.client.lock.Unlock()
	select {
	case <-s.gone:
		endedBy = true
	default:
	}
	if !endedBy {
		err := s.client.call(ctx, methodUnwatch, map[string]any{"watch": s.id}, nil, "", "")
		var refusal *StateError
		var local *ClientError
		switch {
		case err == nil:
		case errors.As(err, &refusal) && refusal.Reason == ReasonUnknownWatch:
		case errors.As(err, &local) && local.Reason == ClientClosed:
		default:
			s.stopErr = err
		}
	}
	s.client.detach(s, false)
	return s.stopErr
}

// WatchOption tunes a watch or a mirror: a Filter, a Consistency.
type WatchOption interface {
	applyWatch(*watchOptions)
}

type watchOptions struct {
	filter      string
	consistency Consistency
}

type filterOption string

func (f filterOption) applyWatch(options *watchOptions) { options.filter = string(f) }

// Filter watches only keys matching filter (* and > as whole tokens: "all.*", "machine-1.>").
func Filter(filter string) WatchOption {
	return filterOption(filter)
}

// Watch returns the bucket's current values (EventPut), exactly one EventCurrent, then every change
// (EventPut or EventDelete); a stored value the codec refuses comes as EventInvalid. If the watch cannot
// go on, its last event is EventEnded. Leaving the loop (break, return, a panic) unwatches: the runtime
// deletes the consumer before the loop's next statement runs. A refused watch yields its error once.
// ctx bounds the whole iteration; when it is done the watch is left and ctx's error is yielded.
//
// Back-pressure: the runtime sends a watch's next batch only once the loop has taken every event of the
// one before, so a slow loop slows the runtime down instead of piling up events.
func (b *ReadOnlyBucket[T]) Watch(ctx context.Context, options ...WatchOption) iter.Seq2[Event[T], error] {
	settings := watchOptions{}
	for _, option := range options {
		option.applyWatch(&settings)
	}
	return func(yield func(Event[T], error) bool) {
		stream, err := b.client.openWatch(ctx, b.name, settings)
		if err != nil {
			yield(Event[T]{}, err)
			return
		}
		defer func() {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unwatchTimeout)
			defer cancel()
			_ = stream.stop(stopCtx)
		}()
		for {
			select {
			case batch := <-stream.batches:
				for _, wire := range batch.events {
					event := decodeEvent(b.codec, b.name, wire)
					if !yield(event, nil) || event.Type == EventEnded {
						return
					}
				}
				close(batch.taken)
			case <-stream.stopped:
				yield(Event[T]{Type: EventEnded, EndReason: "closed", Message: "the client was closed"}, nil)
				return
			case <-stream.gone:
				yield(Event[T]{Type: EventEnded, EndReason: "closed", Message: fmt.Sprint(stream.goneWhy)}, nil)
				return
			case <-ctx.Done():
				yield(Event[T]{}, ctx.Err())
				return
			}
		}
	}
}
