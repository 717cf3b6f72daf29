package meshstate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// peerEnd is the runtime's side of a LineChannel over two pipes: it reads the bundle's lines and writes its own.
type peerEnd struct {
	lines  *bufio.Scanner
	writer *io.PipeWriter
}

func (p *peerEnd) next(t *testing.T) map[string]any {
	t.Helper()
	if !p.lines.Scan() {
		t.Fatalf("the bundle's output ended: %v", p.lines.Err())
	}
	var message map[string]any
	if err := json.Unmarshal(p.lines.Bytes(), &message); err != nil {
		t.Fatalf("%q: %v", p.lines.Text(), err)
	}
	return message
}

func (p *peerEnd) send(line string) { _, _ = io.WriteString(p.writer, line+"\n") }

func pipedChannel(t *testing.T) (*LineChannel, *peerEnd) {
	t.Helper()
	runtimeReads, bundleWrites := io.Pipe()
	bundleReads, runtimeWrites := io.Pipe()
	channel := NewLineChannel(bundleReads, bundleWrites, LineChannelOptions{})
	t.Cleanup(func() { _ = runtimeWrites.Close(); _ = runtimeReads.Close() })
	scanner := bufio.NewScanner(runtimeReads)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	return channel, &peerEnd{lines: scanner, writer: runtimeWrites}
}

func TestLineChannelRequestsAndAnswers(t *testing.T) {
	channel, runtime := pipedChannel(t)
	type reply struct {
		result json.RawMessage
		err    error
	}
	replies := make(chan reply, 2)
	go func() {
		result, err := channel.Request(testContext(t), methodGet, map[string]any{"bucket": "notes", "key": "a"})
		replies <- reply{result, err}
	}()
	request := runtime.next(t)
	if request["jsonrpc"] != "2.0" || request["method"] != methodGet || fmt.Sprint(request["params"]) != "map[bucket:notes key:a]" {
		t.Fatalf("request %v", request)
	}
	runtime.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"key":"a","value":1,"revision":2,"updated":"x"}}`, request["id"]))
	if got := <-replies; got.err != nil || !strings.Contains(string(got.result), `"revision":2`) {
		t.Fatal(got.result, got.err)
	}
	go func() {
		result, err := channel.Request(testContext(t), methodPut, map[string]any{})
		replies <- reply{result, err}
	}()
	request = runtime.next(t)
	runtime.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"error":{"code":-32020,"message":"m","data":{"reason":"conflict","revision":4}}}`, request["id"]))
	var rpc *RPCError
	if got := <-replies; !errors.As(got.err, &rpc) || rpc.Code != -32020 {
		t.Fatal(got.err)
	}
}

func TestLineChannelAnswersWhatItCannotServe(t *testing.T) {
	_, runtime := pipedChannel(t)
	for _, c := range []struct{ line, want string }{
		{`not json`, `"code":-32700`},
		{`{"jsonrpc":"2.0","id":4,"method":"mesh/unknown","params":{}}`, `"code":-32601`},
		{`{"jsonrpc":"1.0","id":5,"method":"mesh/state","params":{}}`, `"code":-32600`},
		{`{"jsonrpc":"2.0","id":6,"method":"mesh/state","params":{"watch":"w1","events":[{"type":"current"}]}}`, `"code":-32601,"message":"method not found: mesh/state"`},
	} {
		runtime.send(c.line)
		encoded, _ := json.Marshal(runtime.next(t))
		if !strings.Contains(string(encoded), c.want) {
			t.Errorf("%s: answered %s", c.line, encoded)
		}
	}
}

func TestLineChannelEndFailsPendingRequests(t *testing.T) {
	channel, runtime := pipedChannel(t)
	failed := make(chan error, 1)
	go func() {
		_, err := channel.Request(testContext(t), methodGet, map[string]any{})
		failed <- err
	}()
	runtime.next(t)
	_ = runtime.writer.Close()
	if err := <-failed; !errors.Is(err, ErrChannelClosed) {
		t.Fatal(err)
	}
	<-channel.Done()
	if _, err := channel.Request(testContext(t), methodGet, nil); !errors.Is(err, ErrChannelClosed) {
		t.Fatal(err)
	}
}

// Many goroutines share one channel: every answer reaches its own caller, whatever the order.
func TestLineChannelConcurrentRequestsGetTheirOwnAnswers(t *testing.T) {
	channel, runtime := pipedChannel(t)
	const callers = 50
	go func() {
		var ids []any
		for range callers {
			ids = append(ids, runtime.next(t)["id"])
		}
		for index := len(ids) - 1; index >= 0; index-- {
			runtime.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":%v}`, ids[index], ids[index]))
		}
	}()
	var group sync.WaitGroup
	for range callers {
		group.Add(1)
		go func() {
			defer group.Done()
			var params struct{}
			result, err := channel.Request(testContext(t), "x", params)
			if err != nil {
				t.Error(err)
			}
			_ = result
		}()
	}
	group.Wait()
}

// One channel, two users: the host's own verb (an echo standing in for mesh/publish) and the state verbs,
// with a host request answered while a watch batch is held for the loop.
func TestAttachSharesTheChannelWithTheHostsOwnVerbs(t *testing.T) {
	channel, runtime := pipedChannel(t)
	channel.Handle("mesh/event", func(_ context.Context, params json.RawMessage) (any, error) {
		return map[string]any{"echo": params}, nil
	})
	client := Attach(channel)
	ctx := testContext(t)
	events := make(chan Event[int])
	release := make(chan struct{})
	go func() {
		for event := range State[int](client, "notes").Watch(ctx) {
			events <- event
			<-release // the loop is still handling the event: its batch stays unanswered
		}
	}()
	watch := runtime.next(t)
	runtime.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"watch":"w1"}}`, watch["id"]))
	runtime.send(`{"jsonrpc":"2.0","id":"r1","method":"mesh/state","params":{"watch":"w1","events":[{"type":"current"}]}}`)
	if event := <-events; event.Type != EventCurrent {
		t.Fatal(event)
	}
	// The batch is held (the loop has not asked for more); the host's request is answered meanwhile.
	runtime.send(`{"jsonrpc":"2.0","id":"r2","method":"mesh/event","params":{"n":1}}`)
	if answer := runtime.next(t); answer["id"] != "r2" || fmt.Sprint(answer["result"]) != "map[echo:map[n:1]]" {
		t.Fatalf("answer %v", answer)
	}
	close(release)
	if answer := runtime.next(t); answer["id"] != "r1" {
		t.Fatalf("answer %v", answer)
	}
}
