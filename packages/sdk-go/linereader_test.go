package meshstate

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll collects what a lineReader makes of input: lines, and markers for what it reported.
func readAll(input string, maxBytes int, chunked bool) []string {
	var source io.Reader = strings.NewReader(input)
	if chunked {
		source = iotest.OneByteReader(source)
	}
	reader := newLineReader(source, maxBytes)
	var out []string
	for {
		line, err := reader.Next()
		switch {
		case err == nil:
			out = append(out, string(line))
		case errors.Is(err, errLineTooLong):
			out = append(out, "<too long>")
		case errors.Is(err, errInvalidUTF8):
			out = append(out, "<not utf-8>")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return append(out, "<truncated>")
		default:
			return out
		}
	}
}

func TestLineReader(t *testing.T) {
	cases := []struct {
		name  string
		input string
		max   int
		want  []string
	}{
		{"lines", "a\nbc\n", 10, []string{"a", "bc"}},
		{"blank lines skipped, CRLF trimmed", "\n  \r\na\r\n\n", 10, []string{"a"}},
		{"exactly the bound", "12345\n", 5, []string{"12345"}},
		{"one over the bound, skipped to its newline", "123456\nok\n", 5, []string{"<too long>", "ok"}},
		{"a carriage return counts", "12345\r\nok\n", 5, []string{"<too long>", "ok"}},
		{"over the bound at the end", "ok\n1234567", 5, []string{"ok", "<too long>"}},
		{"a partial last line is dropped", "ok\npartial", 50, []string{"ok", "<truncated>"}},
		{"invalid UTF-8 skipped", "\xff\xfe\nok\n", 50, []string{"<not utf-8>", "ok"}},
		{"UTF-8 across chunks", "é🚀\n", 50, []string{"é🚀"}},
		{"empty input", "", 5, nil},
	}
	for _, c := range cases {
		for _, chunked := range []bool{false, true} {
			got := readAll(c.input, c.max, chunked)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("%s (chunked %v): got %q, want %q", c.name, chunked, got, c.want)
			}
		}
	}
}

// A line longer than the reader's buffer is held up to the bound and no further.
func TestLineReaderLongLines(t *testing.T) {
	long := strings.Repeat("x", 200_000)
	got := readAll(long+"\n"+long+"y\nend\n", 200_000, false)
	if len(got) != 3 || got[0] != long || got[1] != "<too long>" || got[2] != "end" {
		t.Fatalf("got %d lines: %.30q", len(got), got)
	}
	if defaultMaxLineBytes != 18*1024*1024 {
		t.Fatal("the default bound must match sdk-ts's RUNTIME_MAX_LINE_BYTES")
	}
}

// FuzzLineReader: whatever the input, every line is within the bound, valid UTF-8, has no newline, and
// the reader ends; and what it delivers equals the complete lines of the input that fit.
func FuzzLineReader(f *testing.F) {
	for _, seed := range []string{"a\nb\n", "\r\n\r\n", "123456789\nx", "\xff\n", strings.Repeat("y", 40) + "\nz\n", "é\n"} {
		f.Add([]byte(seed), 8)
	}
	f.Fuzz(func(t *testing.T, input []byte, maxBytes int) {
		if maxBytes < 1 || maxBytes > 64 {
			maxBytes = 1 + (maxBytes%64+64)%64
		}
		reader := newLineReader(bytes.NewReader(input), maxBytes)
		var want []string
		parts := bytes.Split(input, []byte{'\n'})
		for _, part := range parts[:len(parts)-1] {
			if len(part) > maxBytes {
				continue
			}
			line := bytes.TrimSuffix(part, []byte{'\r'})
			if len(bytes.TrimSpace(line)) == 0 || !isUTF8(line) {
				continue
			}
			want = append(want, string(line))
		}
		var got []string
		for range len(input) + 2 {
			line, err := reader.Next()
			if err == nil {
				if len(line) > maxBytes || bytes.IndexByte(line, '\n') >= 0 || !isUTF8(line) {
					t.Fatalf("bad line %q", line)
				}
				got = append(got, string(line))
				continue
			}
			if errors.Is(err, errLineTooLong) || errors.Is(err, errInvalidUTF8) {
				continue
			}
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("got %q, want %q", got, want)
			}
			return
		}
		t.Fatal("the reader did not end")
	})
}
