package meshstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Handler answers one request the other side sent. Return an *RPCError for a specific error answer.
type Handler func(ctx context.Context, params json.RawMessage) (any, error)

// Channel is what the SDK needs from a connection to its runtime: send a request and wait for its
// answer, and receive requests by method. The channel owns the JSON-RPC id space, so a module that
// already talks to its runtime on its stdio (mesh/publish, mesh/event, …) adds state by handing its own
// channel to Attach instead of giving the SDK the whole stdio.
type Channel interface {
	// Request sends method with params and returns the result; an error answer is an *RPCError.
	Request(ctx context.Context, method string, params any) (json.RawMessage, error)
	// Handle routes the other side's requests for method to handler (one handler per method). Each
	// request is handled in its own goroutine, and its answer is sent when the handler returns.
	Handle(method string, handler Handler)
	// Done is closed when the channel is gone; Err then says why.
	Done() <-chan struct{}
	Err() error
}

// ErrChannelClosed is the cause of a request that cannot be answered because the channel is gone.
var ErrChannelClosed = errors.New("meshstate: channel closed")

// LineChannel is JSON-RPC 2.0 over NDJSON on a reader and a writer: both sides send requests.
// Stdio is the default one; any byte stream will do.
type LineChannel struct {
	writer     io.Writer
	writeLock  sync.Mutex
	lock       sync.Mutex
	nextID     int64
	pending    map[int64]chan answer
	handlers   map[string]Handler
	inFlight   map[string]bool
	done       chan struct{}
	err        error
	onProblem  func(problem string)
	ctx        context.Context
	cancel     context.CancelFunc
	handlersWG sync.WaitGroup
}

type answer struct {
	result json.RawMessage
	err    error
}

// LineChannelOptions tune a LineChannel.
type LineChannelOptions struct {
	// MaxLineBytes bounds one received line (default 18 MiB: the runtime's largest answer, 17 MiB, and its envelope).
	MaxLineBytes int
	// OnProblem is told about input that broke the wire (for logging to stderr). Silent when nil.
	OnProblem func(problem string)
}

// NewLineChannel starts reading r; lines are written to w. It ends when r ends or fails.
func NewLineChannel(r io.Reader, w io.Writer, options LineChannelOptions) *LineChannel {
	ctx, cancel := context.WithCancel(context.Background())
	channel := &LineChannel{
		writer:    w,
		pending:   map[int64]chan answer{},
		handlers:  map[string]Handler{},
		inFlight:  map[string]bool{},
		done:      make(chan struct{}),
		onProblem: options.OnProblem,
		ctx:       ctx,
		cancel:    cancel,
	}
	go channel.read(newLineReader(r, options.MaxLineBytes))
	return channel
}

// Handle implements Channel.
func (c *LineChannel) Handle(method string, handler Handler) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.handlers[method] = handler
}

// Done implements Channel.
func (c *LineChannel) Done() <-chan struct{} { return c.done }

// Err implements Channel: why the channel ended, nil while it is open.
func (c *LineChannel) Err() error {
	c.lock.Lock()
	defer c.lock.Unlock()
	return c.err
}

// Close ends the channel: pending requests fail with ErrChannelClosed. It does not close the streams.
func (c *LineChannel) Close() error {
	c.shutDown(fmt.Errorf("%w: closed by the bundle", ErrChannelClosed))
	return nil
}

// Request implements Channel.
func (c *LineChannel) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	encoded, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("meshstate: params of %s are not JSON: %w", method, err)
	}
	reply := make(chan answer, 1)
	c.lock.Lock()
	if c.err != nil {
		err := c.err
		c.lock.Unlock()
		return nil, err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = reply
	c.lock.Unlock()
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%s,"params":%s}`, id, quote(method), encoded)
	if err := c.writeLine(line); err != nil {
		c.forget(id)
		return nil, err
	}
	select {
	case got := <-reply:
		return got.result, got.err
	case <-ctx.Done():
		c.forget(id)
		return nil, ctx.Err()
	}
}

func (c *LineChannel) forget(id int64) {
	c.lock.Lock()
	delete(c.pending, id)
	c.lock.Unlock()
}

func quote(text string) []byte {
	encoded, _ := json.Marshal(text)
	return encoded
}

func (c *LineChannel) writeLine(line []byte) error {
	c.writeLock.Lock()
	defer c.writeLock.Unlock()
	if _, err := c.writer.Write(append(line, '\n')); err != nil {
		failed := fmt.Errorf("%w: writing failed: %w", ErrChannelClosed, err)
		c.shutDown(failed)
		return failed
	}
	return nil
}

func (c *LineChannel) read(lines *lineReader) {
	for {
		line, err := lines.Next()
		switch {
		case err == nil:
			c.receive(line)
		case errors.Is(err, errLineTooLong):
			c.problem("dropped a line from the runtime over the size bound")
		case errors.Is(err, errInvalidUTF8):
			c.problem("dropped a line from the runtime that is not UTF-8")
		default:
			if errors.Is(err, io.ErrUnexpectedEOF) {
				c.problem("the runtime's input ended inside a line")
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				c.shutDown(fmt.Errorf("%w: the runtime's input ended", ErrChannelClosed))
			} else {
				c.shutDown(fmt.Errorf("%w: reading the runtime's input failed: %w", ErrChannelClosed, err))
			}
			return
		}
	}
}

func (c *LineChannel) problem(text string) {
	if c.onProblem != nil {
		c.onProblem(text)
	}
}

// envelope is any JSON-RPC message; which fields are present decides what it is.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *RPCError       `json:"error"`
}

func (c *LineChannel) receive(line []byte) {
	var message envelope
	if err := json.Unmarshal(line, &message); err != nil {
		c.problem("parse error")
		c.answerError(nil, -32700, "parse error: a line must be one JSON object", nil)
		return
	}
	if message.Method != nil {
		c.receiveRequest(message)
		return
	}
	id, err := strconv.ParseInt(string(message.ID), 10, 64)
	c.lock.Lock()
	reply, found := c.pending[id]
	delete(c.pending, id)
	c.lock.Unlock()
	if err != nil || !found {
		c.problem("answer to an unknown id")
		return
	}
	switch {
	case message.JSONRPC != "2.0":
		reply <- answer{err: &ClientError{Reason: ClientProtocol, Message: "the runtime answered without jsonrpc 2.0"}}
	case message.Error != nil && message.Result == nil:
		reply <- answer{err: message.Error}
	case message.Result != nil && message.Error == nil:
		reply <- answer{result: message.Result}
	default:
		reply <- answer{err: &ClientError{Reason: ClientProtocol, Message: "the runtime's answer has neither a result nor an error"}}
	}
}

func (c *LineChannel) receiveRequest(message envelope) {
	id := message.ID
	if len(id) == 0 || bytes.Equal(id, []byte("null")) {
		return // a notification: nothing to answer, and the SDK expects none
	}
	if message.JSONRPC != "2.0" || !validID(id) {
		c.answerError(nil, -32600, "invalid request: not a JSON-RPC 2.0 request", nil)
		return
	}
	key := string(id)
	c.lock.Lock()
	handler, known := c.handlers[*message.Method]
	duplicate := c.inFlight[key]
	if known && !duplicate {
		c.inFlight[key] = true
		c.handlersWG.Add(1)
	}
	c.lock.Unlock()
	switch {
	case !known:
		c.answerError(id, -32601, "method not found: "+*message.Method, nil)
		return
	case duplicate:
		c.answerError(id, -32600, "invalid request: id "+key+" is already in use by a request being answered", nil)
		return
	}
	go func() {
		defer c.handlersWG.Done()
		result, err := handler(c.ctx, message.Params)
		c.lock.Lock()
		delete(c.inFlight, key)
		c.lock.Unlock()
		if err != nil {
			var rpc *RPCError
			if errors.As(err, &rpc) {
				c.answerError(id, rpc.Code, rpc.Message, rpc.Data)
			} else {
				c.answerError(id, -32603, "internal error while answering "+*message.Method, nil)
			}
			return
		}
		encoded, err := json.Marshal(result)
		if err != nil {
			c.answerError(id, -32603, "internal error: the result is not JSON", nil)
			return
		}
		_ = c.writeLine(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, encoded))
	}()
}

func validID(id json.RawMessage) bool {
	var value any
	if json.Unmarshal(id, &value) != nil {
		return false
	}
	switch value.(type) {
	case string, float64:
		return true
	}
	return false
}

func (c *LineChannel) answerError(id json.RawMessage, code int, message string, data json.RawMessage) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	failure := struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{code, message, data}
	encoded, _ := json.Marshal(failure)
	_ = c.writeLine(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":%s}`, id, encoded))
}

func (c *LineChannel) shutDown(reason error) {
	c.lock.Lock()
	if c.err != nil {
		c.lock.Unlock()
		return
	}
	c.err = reason
	pending := c.pending
	c.pending = map[int64]chan answer{}
	c.lock.Unlock()
	c.cancel()
	for _, reply := range pending {
		reply <- answer{err: reason}
	}
	close(c.done)
}
