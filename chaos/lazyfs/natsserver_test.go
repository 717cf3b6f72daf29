package lazyfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsServer is one nats-server process whose JetStream store is on a lazyfs.
type natsServer struct {
	cmd *exec.Cmd
	url string
}

func startNatsServer(t *testing.T, ctx context.Context, configPath, portsDir string) *natsServer {
	t.Helper()
	bin := os.Getenv("NATS_SERVER_BIN")
	if bin == "" {
		t.Fatal("NATS_SERVER_BIN must name a nats-server binary (scripts/nats-servers.sh builds the pinned ones)")
	}
	cmd := exec.Command(bin, "-c", configPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	server := &natsServer{cmd: cmd}
	t.Cleanup(server.kill)
	portsFile := filepath.Join(portsDir, fmt.Sprintf("nats-server_%d.ports", cmd.Process.Pid))
	for ctx.Err() == nil {
		var ports struct{ Nats []string }
		if data, err := os.ReadFile(portsFile); err == nil && json.Unmarshal(data, &ports) == nil && len(ports.Nats) > 0 {
			server.url = ports.Nats[0]
			return server
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nats-server wrote no ports file %s: %v", portsFile, ctx.Err())
	return nil
}

// kill is a SIGKILL: nothing the server holds in memory or has not synced gets a chance to land.
func (s *natsServer) kill() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}

// jetStreamAt connects to the server at url; the caller closes the connection with the returned func.
func jetStreamAt(t *testing.T, url string) (jetstream.JetStream, func()) {
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	return js, nc.Close
}

func publish(t *testing.T, ctx context.Context, url string, from, to int) {
	js, closeConnection := jetStreamAt(t, url)
	defer closeConnection()
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "LAZY", Subjects: []string{"lazy.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	for i := from; i < to; i++ {
		if _, err := js.Publish(ctx, "lazy.msg", fmt.Appendf(nil, "message %d", i)); err != nil {
			t.Fatal(err)
		}
	}
}

// jetStreamLossAfterCrash publishes `synced` messages to a file-stored stream on a lazyfs and waits
// until the server's periodic sync has run once (0: no wait), publishes up to `published`, SIGKILLs it,
// loses what was not synced, restarts it and returns how many messages the stream still holds
// (-1: the stream itself is gone).
func jetStreamLossAfterCrash(t *testing.T, syncInterval string, synced, published int) (left int, lost Loss) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := mountForTest(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "server.conf")
	sync := ""
	if syncInterval != "" {
		sync = "sync_interval: " + syncInterval
	}
	err := os.WriteFile(config, []byte(fmt.Sprintf(`server_name: lazy
listen: "127.0.0.1:-1"
ports_file_dir: %q
jetstream { store_dir: %q
  %s }
`, dir, filepath.Join(f.Mountpoint, "js"), sync)), 0o644)
	if err != nil {
		t.Fatal(err)
	}

	server := startNatsServer(t, ctx, config, dir)
	if synced > 0 {
		publish(t, ctx, server.url, 0, synced)
		for s := f.Stats(); s.Syncs == 0; s = f.Stats() {
			if ctx.Err() != nil {
				t.Fatalf("nats-server never synced its store: %+v", s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	publish(t, ctx, server.url, synced, published)
	t.Logf("sync_interval %q, before the crash: %+v", syncInterval, f.Stats())

	server.kill()
	lost = f.LoseUnsynced()

	server = startNatsServer(t, ctx, config, dir)
	js, closeConnection := jetStreamAt(t, server.url)
	defer closeConnection()
	stream, err := js.Stream(ctx, "LAZY")
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return -1, lost
	}
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	server.kill() // before the unmount: the server holds the store open
	return int(info.State.Msgs), lost
}

// The measurement issue 44 asks for: with the default sync_interval an acknowledged JetStream publish
// lives in the page cache until the next periodic sync, and a power loss takes it; with
// sync_interval: always every acknowledged publish survives.
func TestNatsServerLosesAcknowledgedPublishesUnlessSyncAlways(t *testing.T) {
	const synced, published = 10, 20
	left, lost := jetStreamLossAfterCrash(t, "", 0, published)
	t.Logf("default sync_interval, a new stream: %d of %d acknowledged messages left after kill -9 + power loss (-1: the stream is gone; lost %d files, %d bytes of pages)", left, published, lost.Files, lost.Bytes)
	if left >= published {
		t.Errorf("default sync_interval kept all %d messages: the power loss was not felt", published)
	}
	// A periodic sync every 2 s syncs the message blocks but not the stream's meta files (measured on
	// 2.15.3: the tick synced one file of three), so the figure is reported, not asserted.
	left, lost = jetStreamLossAfterCrash(t, "2s", synced, published)
	t.Logf("sync_interval 2s, %d messages before a tick, %d after: %d left (-1: the stream is gone; lost %d files, %d bytes of pages)", synced, published-synced, left, lost.Files, lost.Bytes)
	left, lost = jetStreamLossAfterCrash(t, "always", 0, published)
	t.Logf("sync_interval always: %d of %d acknowledged messages left (lost %d files, %d bytes of pages)", left, published, lost.Files, lost.Bytes)
	if left != published {
		t.Errorf("sync_interval: always kept %d of %d acknowledged messages", left, published)
	}
}
