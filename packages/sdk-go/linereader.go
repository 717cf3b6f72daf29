package meshstate

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// defaultMaxLineBytes is the longest line accepted from the runtime: runtime-state answers keys and
// history with up to 17 MiB of JSON and refuses more, so 18 MiB covers the JSON-RPC envelope. A dropped
// line would leave a request pending for ever, so this bound must not be below the runtime's.
const defaultMaxLineBytes = 18 * 1024 * 1024

// errLineTooLong reports a line over the reader's bound; the reader has skipped it up to its newline.
var errLineTooLong = errors.New("meshstate: line over the size bound")

// errInvalidUTF8 reports a line that is not UTF-8; it was skipped, as JSON text is UTF-8.
var errInvalidUTF8 = errors.New("meshstate: line is not valid UTF-8")

// lineReader splits NDJSON input into lines, never holding more than MaxLineBytes of one line.
// A longer line is reported once as errLineTooLong and skipped; blank lines are skipped; a trailing
// "\r" is removed; an unfinished last line at EOF is dropped (io.ErrUnexpectedEOF), never delivered.
type lineReader struct {
	reader   *bufio.Reader
	maxBytes int
	line     []byte
}

// newLineReader reads lines of at most maxBytes (without the newline) from r; maxBytes <= 0 means
// defaultMaxLineBytes.
func newLineReader(r io.Reader, maxBytes int) *lineReader {
	if maxBytes <= 0 {
		maxBytes = defaultMaxLineBytes
	}
	return &lineReader{reader: bufio.NewReaderSize(r, 64*1024), maxBytes: maxBytes}
}

// Next returns the next non-blank line. The slice is valid until the next call. Errors: errLineTooLong
// and errInvalidUTF8 (the reader goes on after them), io.EOF at a clean end, io.ErrUnexpectedEOF when
// the input stopped inside a line, or the underlying reader's error.
func (r *lineReader) Next() ([]byte, error) {
	for {
		r.line = r.line[:0]
		oversize := false
		for {
			chunk, err := r.reader.ReadSlice('\n')
			if !oversize {
				content := len(r.line) + len(chunk)
				if err == nil {
					content-- // the newline does not count
				}
				if content > r.maxBytes {
					oversize = true
					r.line = r.line[:0]
				} else {
					r.line = append(r.line, chunk...)
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil {
				if oversize {
					return nil, errLineTooLong
				}
				if errors.Is(err, io.EOF) && len(r.line) > 0 {
					return nil, io.ErrUnexpectedEOF
				}
				return nil, err
			}
			break
		}
		if oversize {
			return nil, errLineTooLong
		}
		line := r.line[:len(r.line)-1]
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !utf8.Valid(line) {
			return nil, errInvalidUTF8
		}
		return line, nil
	}
}
