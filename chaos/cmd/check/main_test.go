package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The binary itself: a verdict line per checker, exit 1 on a violation, 0 on a clean history.
func TestBinaryExitCodes(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "check")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	clean := `{"process":1,"op":"put","key":"a","value":"x","revision":1,"invoke":0,"return":10,"outcome":"ok"}
{"process":2,"op":"get-strong","key":"a","value":"x","found":true,"revision":1,"invoke":20,"return":30,"outcome":"ok","final":true}
`
	lost := `{"process":1,"op":"put","key":"a","value":"x","revision":1,"invoke":0,"return":10,"outcome":"ok"}
{"process":2,"op":"get-strong","key":"a","invoke":20,"return":30,"outcome":"ok","final":true}
`
	for name, c := range map[string]struct {
		history string
		code    int
		want    string
	}{
		"clean":      {clean, 0, "acknowledged-writes      pass"},
		"lost write": {lost, 1, "acknowledged-writes      violation"},
		"unreadable": {"{not json\n", 2, ""},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".jsonl")
		if err := os.WriteFile(path, []byte(c.history), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, path).Output()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(string(out), c.want) {
			t.Errorf("%s: exit %d, output:\n%s\nwant exit %d and %q", name, code, out, c.code, c.want)
		}
		if c.code != 2 && strings.Count(string(out), "\n") != 8 {
			t.Errorf("%s: want 8 verdict lines, got:\n%s", name, out)
		}
	}
}
