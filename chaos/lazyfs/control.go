package lazyfs

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
)

// Reply is one line the control socket answers with, as JSON.
type Reply struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	Loss  *Loss  `json:"loss,omitempty"`
	Stats *Stats `json:"stats,omitempty"`
}

// The control commands, one per line.
const (
	CommandLoseUnsynced = "lose-unsynced"
	CommandStats        = "stats"
)

// ListenControl opens the control socket at path. A socket left there by a lazyfs that died is
// replaced; one that still answers is refused.
func ListenControl(path string) (net.Listener, error) {
	if conn, err := net.Dial("unix", path); err == nil {
		conn.Close()
		return nil, fmt.Errorf("lazyfs: control socket %s is in use", path)
	}
	if info, err := os.Lstat(path); err == nil && info.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
	listener, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("lazyfs: control socket: %w", err)
	}
	return listener, nil
}

// ServeControl answers commands on the listener until ctx ends (then closes it): one command per
// line, one JSON Reply per line.
func (f *FS) ServeControl(ctx context.Context, listener net.Listener) error {
	go func() {
		<-ctx.Done()
		listener.Close()
	}()
	for {
		conn, err := listener.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go f.serveConn(conn)
	}
}

func (f *FS) serveConn(conn net.Conn) {
	defer conn.Close()
	lines := bufio.NewScanner(conn)
	out := json.NewEncoder(conn)
	for lines.Scan() {
		if err := out.Encode(f.Command(strings.TrimSpace(lines.Text()))); err != nil {
			return
		}
	}
}

// Command runs one control command in process.
func (f *FS) Command(command string) Reply {
	switch command {
	case CommandLoseUnsynced:
		loss := f.LoseUnsynced()
		return Reply{OK: true, Loss: &loss}
	case CommandStats:
		stats := f.Stats()
		return Reply{OK: true, Stats: &stats}
	default:
		return Reply{Error: fmt.Sprintf("unknown command %q (want %s or %s)", command, CommandLoseUnsynced, CommandStats)}
	}
}

// Send sends one command to the control socket at path and returns its reply.
func Send(ctx context.Context, path, command string) (Reply, error) {
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "unix", path)
	if err != nil {
		return Reply{}, fmt.Errorf("lazyfs: control socket %s: %w", path, err)
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	if _, err := fmt.Fprintln(conn, command); err != nil {
		return Reply{}, err
	}
	var reply Reply
	if err := json.NewDecoder(conn).Decode(&reply); err != nil {
		return Reply{}, fmt.Errorf("lazyfs: reading reply: %w", err)
	}
	if !reply.OK {
		return reply, errors.New("lazyfs: " + reply.Error)
	}
	return reply, nil
}
