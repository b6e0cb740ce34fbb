package rpc

import (
	"bufio"
	"errors"
	"io"
)

// lineReader reads newline-terminated lines of at most max bytes. A longer
// line is consumed and discarded chunk by chunk, never held whole in memory.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline. tooLong reports that the
// line exceeded the limit and was discarded (line is then nil). The last
// line may end without a newline. err is io.EOF after the last line, or the
// reader's error. The returned slice is valid until the next call.
func (l *lineReader) next() (line []byte, tooLong bool, err error) {
	if cap(l.buf) > 1<<20 {
		l.buf = nil // do not keep a large buffer alive for the connection
	}
	l.buf = l.buf[:0]
	read := false
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(chunk) > 0 {
			read = true
		}
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
			if tooLong {
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
func (l *lineReader) grow(n int) {
	need := len(l.buf) + n
	if need <= cap(l.buf) {
		return
	}
	c := max(2*cap(l.buf), need, 4096)
	c = min(c, l.max+1)
	nb := make([]byte, len(l.buf), c)
	copy(nb, l.buf)
	l.buf = nb
}
