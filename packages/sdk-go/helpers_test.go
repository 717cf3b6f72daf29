package meshstate

import (
	"testing"
	"time"
	"unicode/utf8"
)

// waitFor polls a condition that another goroutine makes true; it fails the test at a generous bound.
func waitFor(t *testing.T, condition func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !condition() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func isUTF8(line []byte) bool { return utf8.Valid(line) }
