package meshstate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildSnippet builds a main package using this module and returns the compiler's output and error.
func buildSnippet(t *testing.T, body string) (string, error) {
	t.Helper()
	module, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module snippet\n\ngo 1.23\n\nrequire github.com/mesh/mesh-state/packages/sdk-go v0.0.0\n\nreplace github.com/mesh/mesh-state/packages/sdk-go => " + module + "\n"
	source := "package main\n\nimport (\n\t\"context\"\n\n\tmeshstate \"github.com/mesh/mesh-state/packages/sdk-go\"\n)\n\nfunc main() {\n\tctx := context.Background()\n\tclient := meshstate.ConnectStdio(meshstate.LineChannelOptions{})\n" + body + "\n}\n"
	for name, text := range map[string]string{"go.mod": goMod, "main.go": source} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	command := exec.Command("go", "build", "-o", os.DevNull, ".")
	command.Dir = dir
	command.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	output, err := command.CombinedOutput()
	return string(output), err
}

// A write to a read bucket does not compile: ReadOnlyBucket has no write method. The same snippet with a
// read compiles, so the failure is the missing method and nothing else.
func TestAWriteToAReadBucketDoesNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with the go command")
	}
	reads := "\tbindings := meshstate.Reads[string](client, \"licence-manager.bindings\")\n"
	if output, err := buildSnippet(t, reads+"\t_, _, _ = bindings.Get(ctx, \"node-1\")"); err != nil {
		t.Fatalf("the read does not build: %v\n%s", err, output)
	}
	for method, call := range map[string]string{
		"Put":    "_, _ = bindings.Put(ctx, \"node-1\", \"x\")",
		"Create": "_, _ = bindings.Create(ctx, \"node-1\", \"x\")",
		"Delete": "_ = bindings.Delete(ctx, \"node-1\")",
		"Update": "_, _ = bindings.Update(ctx, \"node-1\", func(v string, _ bool) (string, error) { return v, nil })",
	} {
		output, err := buildSnippet(t, reads+"\t"+call)
		if err == nil || !strings.Contains(output, "bindings."+method+" undefined") {
			t.Errorf("%s on a read bucket: err %v\n%s", method, err, output)
		}
	}
}
