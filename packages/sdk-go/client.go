package meshstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// The wire's method names (state-protocol's STATE_METHODS and WATCH_EVENTS_METHOD).
const (
	methodGet         = "mesh/state.get"
	methodPut         = "mesh/state.put"
	methodDelete      = "mesh/state.delete"
	methodKeys        = "mesh/state.keys"
	methodHistory     = "mesh/state.history"
	methodWatch       = "mesh/state.watch"
	methodUnwatch     = "mesh/state.unwatch"
	methodWatchEvents = "mesh/state"
)

// Client is a bundle's connection to its runtime's state verbs. Make one with ConnectStdio (the
// default: the process's stdin and stdout) or Attach (a channel the bundle already has). Handles come
// from State and Reads. A Client is safe for concurrent use.
type Client struct {
	channel Channel
	owned   *LineChannel

	lock     sync.Mutex
	watches  map[string]*watchStream
	starting int
	changed  chan struct{}
	open     map[*watchStream]struct{}
}

// Attach adds the state verbs to a channel the bundle already has: the channel sends the verbs and
// routes the runtime's mesh/state requests (watch batches) to this client.
func Attach(channel Channel) *Client {
	client := &Client{
		channel: channel,
		watches: map[string]*watchStream{},
		changed: make(chan struct{}),
		open:    map[*watchStream]struct{}{},
	}
	channel.Handle(methodWatchEvents, client.receiveBatch)
	go func() {
		<-channel.Done()
		client.channelGone()
	}()
	return client
}

// ConnectStdio connects over the process's stdin (the runtime's lines) and stdout (the bundle's).
// Nothing else may write to stdout: log to stderr.
func ConnectStdio(options LineChannelOptions) *Client {
	channel := NewLineChannel(os.Stdin, os.Stdout, options)
	client := Attach(channel)
	client.owned = channel
	return client
}

// Done is closed when the channel to the runtime is gone.
func (c *Client) Done() <-chan struct{} { return c.channel.Done() }

// Close unwatches every open watch (the runtime deletes their consumers at once) and, for a client that
// owns its channel (ConnectStdio), stops using it.
func (c *Client) Close(ctx context.Context) error {
	c.lock.Lock()
	streams := make([]*watchStream, 0, len(c.open))
	for stream := range c.open {
		streams = append(streams, stream)
	}
	c.lock.Unlock()
	var failures []error
	for _, stream := range streams {
		if err := stream.stop(ctx); err != nil {
			failures = append(failures, err)
		}
	}
	if c.owned != nil {
		_ = c.owned.Close()
	}
	return errors.Join(failures...)
}

// call sends one verb and decodes its result into out, turning error answers into typed errors.
func (c *Client) call(ctx context.Context, method string, params any, out any, bucket, key string) error {
	raw, err := c.channel.Request(ctx, method, params)
	if err != nil {
		return c.translate(err, method, bucket, key)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &ClientError{Reason: ClientProtocol, Message: fmt.Sprintf("the runtime's answer to %s does not fit the wire contract: %v", method, err), Bucket: bucket, Key: key, Cause: err}
	}
	return nil
}

func (c *Client) translate(err error, method, bucket, key string) error {
	var wire *RPCError
	if errors.As(err, &wire) {
		if refusal := stateErrorFromWire(wire, bucket, key); refusal != nil {
			return refusal
		}
		return &ClientError{Reason: ClientProtocol, Message: fmt.Sprintf("the runtime failed %s (JSON-RPC error %d): %s", method, wire.Code, wire.Message), Bucket: bucket, Key: key, Code: wire.Code, Cause: wire}
	}
	var local *ClientError
	if errors.As(err, &local) {
		return err
	}
	if errors.Is(err, ErrChannelClosed) {
		return &ClientError{Reason: ClientClosed, Message: fmt.Sprintf("%s got no answer: %v", method, err), Bucket: bucket, Key: key, Cause: err}
	}
	return err
}

// receiveBatch answers the runtime's mesh/state request once the watch's consumer has taken every event
// of it: the answer is the back-pressure.
func (c *Client) receiveBatch(ctx context.Context, params json.RawMessage) (any, error) {
	var batch struct {
		Watch  *string         `json:"watch"`
		Events json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(params, &batch); err != nil || batch.Watch == nil {
		return nil, &RPCError{Code: -32602, Message: "invalid mesh/state params: watch: expected a string of 1 to 64 characters"}
	}
	if problem := checkBatch(*batch.Watch, batch.Events); problem != "" {
		return nil, &RPCError{Code: -32602, Message: "invalid mesh/state params: " + problem}
	}
	id := *batch.Watch
	for {
		c.lock.Lock()
		stream, found := c.watches[id]
		starting := c.starting
		changed := c.changed
		c.lock.Unlock()
		if found {
			if err := stream.deliver(ctx, batch.Events); err != nil {
				return nil, err
			}
			return struct{}{}, nil
		}
		if starting == 0 {
			data, _ := json.Marshal(map[string]string{"reason": string(ReasonUnknownWatch)})
			return nil, &RPCError{Code: ReasonUnknownWatch.code(), Message: "this bundle has no watch " + id, Data: data}
		}
		// The runtime answers watch once the first values are on their way: a batch may overtake the answer.
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// notifyChanged wakes batches waiting for a watch id; call with c.lock held.
func (c *Client) notifyChanged() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Client) channelGone() {
	c.lock.Lock()
	streams := make([]*watchStream, 0, len(c.open))
	for stream := range c.open {
		streams = append(streams, stream)
	}
	c.lock.Unlock()
	for _, stream := range streams {
		stream.connectionClosed(c.channel.Err())
	}
}
