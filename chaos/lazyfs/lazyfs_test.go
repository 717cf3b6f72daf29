package lazyfs

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// mountForTest mounts a lazyfs over a temp dir, or skips where the machine cannot (not root, no /dev/fuse).
func mountForTest(t *testing.T) *FS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("lazyfs tests mount FUSE and need root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("lazyfs tests need /dev/fuse: " + err.Error())
	}
	backing, mountpoint := t.TempDir(), t.TempDir()
	f, err := Mount(backing, mountpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return f
}

func writeFile(t *testing.T, path string, data []byte, sync bool) {
	t.Helper()
	file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := file.Write(data); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := file.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestUnsyncedWriteIsLostAndSyncedOneSurvives(t *testing.T) {
	f := mountForTest(t)
	synced := filepath.Join(f.Mountpoint, "synced")
	unsynced := filepath.Join(f.Mountpoint, "unsynced")
	writeFile(t, synced, []byte("kept"), true)
	writeFile(t, unsynced, bytes.Repeat([]byte("x"), 10_000), false)

	// Before the loss the mount shows both; the disk only the synced one.
	if got := readFile(t, unsynced); len(got) != 10_000 {
		t.Fatalf("unsynced file reads %d bytes through the mount, want 10000", len(got))
	}
	if got := readFile(t, filepath.Join(f.Backing, "unsynced")); len(got) != 0 {
		t.Fatalf("backing file has %d bytes before any sync, want 0", len(got))
	}
	if s := f.Stats(); s.UnsyncedFiles != 1 || s.UnsyncedBytes != 3*pageSize {
		t.Fatalf("stats before loss: %+v", s)
	}

	loss := f.LoseUnsynced()
	if loss.Files != 1 || loss.Bytes != 3*pageSize {
		t.Fatalf("loss = %+v, want 1 file, 3 pages", loss)
	}
	if got := readFile(t, unsynced); len(got) != 0 {
		t.Fatalf("after the loss the unsynced file reads %q, want empty", got)
	}
	if got := readFile(t, synced); string(got) != "kept" {
		t.Fatalf("after the loss the synced file reads %q, want kept", got)
	}
}

func TestOverwriteTruncateAndPartialSync(t *testing.T) {
	f := mountForTest(t)
	path := filepath.Join(f.Mountpoint, "log")
	writeFile(t, path, []byte("0123456789"), true)

	// Append without a sync, then truncate below the synced size: both are held back.
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := file.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); string(got) != "0123456789abc" {
		t.Fatalf("through the mount: %q", got)
	}
	if err := file.Truncate(4); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Size() != 4 {
		t.Fatalf("stat after truncate: %v %v", info, err)
	}
	if got := readFile(t, filepath.Join(f.Backing, "log")); string(got) != "0123456789" {
		t.Fatalf("backing before sync: %q", got)
	}
	f.LoseUnsynced()
	if got := readFile(t, path); string(got) != "0123456789" {
		t.Fatalf("after the loss: %q, want the synced 0123456789", got)
	}

	// Now the same, synced: truncation then a write past the end leaves a zero-filled gap on disk.
	file, err = os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if err := file.Truncate(2); err != nil {
		t.Fatal(err)
	}
	if _, err := file.WriteAt([]byte("Z"), 5); err != nil {
		t.Fatal(err)
	}
	if err := file.Sync(); err != nil {
		t.Fatal(err)
	}
	file.Close()
	want := []byte{'0', '1', 0, 0, 0, 'Z'}
	if got := readFile(t, filepath.Join(f.Backing, "log")); !bytes.Equal(got, want) {
		t.Fatalf("backing after sync: %q, want %q", got, want)
	}
	f.LoseUnsynced()
	if got := readFile(t, path); !bytes.Equal(got, want) {
		t.Fatalf("after a loss that had nothing to lose: %q", got)
	}
}

func TestRenameAndUnlinkAreImmediateButContentsAreNot(t *testing.T) {
	f := mountForTest(t)
	tmp := filepath.Join(f.Mountpoint, "file.tmp")
	final := filepath.Join(f.Mountpoint, "file")
	writeFile(t, final, []byte("old"), true)
	// The classic unsafe replace: write, rename over, no fsync. A power loss leaves an empty file.
	writeFile(t, tmp, []byte("new"), false)
	if err := os.Rename(tmp, final); err != nil {
		t.Fatal(err)
	}
	f.LoseUnsynced()
	if got := readFile(t, final); len(got) != 0 {
		t.Fatalf("renamed unsynced file reads %q after a loss, want empty", got)
	}
	writeFile(t, tmp, []byte("gone"), false)
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	if s := f.Stats(); s.UnsyncedFiles != 0 || s.DroppedOnUnlink != 1 {
		t.Fatalf("stats after unlink: %+v", s)
	}
}

func TestControlSocket(t *testing.T) {
	f := mountForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sock := filepath.Join(t.TempDir(), "control.sock")
	// A socket a dead lazyfs left behind is replaced.
	if stale, err := net.Listen("unix", sock); err != nil {
		t.Fatal(err)
	} else {
		stale.(*net.UnixListener).SetUnlinkOnClose(false)
		stale.Close()
	}
	listener, err := ListenControl(sock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ListenControl(sock); err == nil {
		t.Fatal("a second lazyfs took a control socket in use")
	}
	served := make(chan error, 1)
	serveCtx, stop := context.WithCancel(ctx)
	go func() { served <- f.ServeControl(serveCtx, listener) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	writeFile(t, filepath.Join(f.Mountpoint, "a"), []byte("a"), false)
	reply, err := Send(ctx, sock, CommandStats)
	if err != nil || reply.Stats.UnsyncedFiles != 1 {
		t.Fatalf("stats: %+v %v", reply, err)
	}
	reply, err = Send(ctx, sock, CommandLoseUnsynced)
	if err != nil || reply.Loss.Files != 1 {
		t.Fatalf("lose-unsynced: %+v %v", reply, err)
	}
	if _, err := Send(ctx, sock, "format-disk"); err == nil {
		t.Fatal("an unknown command was accepted")
	}
}
