// Package jsonl reads newline-delimited messages (JSON Lines, as JSON-RPC
// 2.0 over stdio and over a socket uses them) with a cap on the length of
// a line: a longer line is consumed and discarded chunk by chunk, never
// held whole in memory, so a client cannot make a server allocate what it
// sends. It is the line reader shared by tabpilot's doors (api/rpc and
// api/mcp); it knows nothing of JSON.
package jsonl

import (
	"bufio"
	"errors"
	"io"
)

// Reader reads newline-terminated lines of at most Max bytes (without the
// newline) from an io.Reader. It is not safe for concurrent use.
type Reader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

// NewReader returns a Reader of r that accepts lines of at most max bytes,
// not counting the newline; max must be positive. It reads through a
// 64 KiB buffer.
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		panic("jsonl: NewReader needs a positive max")
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its newline ("\r" is kept). tooLong
// reports that the line was longer than the cap and was discarded (line is
// then nil). The last line may end without a newline; it is held to the
// same cap. err is io.EOF after the last line, or the reader's error. The
// returned slice is valid until the next call.
func (l *Reader) Next() (line []byte, tooLong bool, err error) {
	if cap(l.buf) > 1<<20 {
		l.buf = nil // do not keep a large buffer alive for the connection
	}
	l.buf = l.buf[:0]
	read := false
	for {
		chunk, err := l.br.ReadSlice('\n')
		read = read || len(chunk) > 0
		if !tooLong {
			if len(l.buf)+len(chunk) > l.max+1 { // +1: the newline
				tooLong = true
				l.buf = l.buf[:0]
			} else {
				l.grow(len(chunk))
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, true, nil
			}
			return l.buf[:len(l.buf)-1], false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && read:
			// The last line, without a newline: return it now, EOF next.
			if tooLong || len(l.buf) > l.max {
				return nil, true, nil
			}
			return l.buf, false, nil
		default:
			return nil, false, err
		}
	}
}

// grow makes room for n more bytes, doubling the capacity (append grows
// large slices by 1.25x, which would allocate about five times the line)
// but never past the cap.
func (l *Reader) grow(n int) {
	need := len(l.buf) + n
	if need <= cap(l.buf) {
		return
	}
	c := min(max(2*cap(l.buf), need, 4096), l.max+1)
	nb := make([]byte, len(l.buf), c)
	copy(nb, l.buf)
	l.buf = nb
}
