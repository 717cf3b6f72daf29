package meshstate_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README's Go snippets are lines of the Examples, which go test runs: a snippet that drifts from the
// code fails here instead of misleading a module author.
func TestTheREADMEQuotesTheExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	quoted := 0
	for _, block := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		for _, line := range strings.Split(block[1], "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			quoted++
			if !strings.Contains(string(examples), line) {
				t.Errorf("README.md quotes a line that is in no Example: %s", line)
			}
		}
	}
	if quoted < 10 {
		t.Fatalf("README.md quotes %d lines of Go; the Examples are meant to be shown there", quoted)
	}
}
