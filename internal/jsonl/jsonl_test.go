package jsonl

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// lines reads in to the end and returns its lines, "!" for one refused as
// too long.
func lines(t *testing.T, in io.Reader, max int) []string {
	t.Helper()
	lr := NewReader(in, max)
	var got []string
	for {
		l, tooLong, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		if tooLong {
			if l != nil {
				t.Fatalf("a refused line comes with %q", l)
			}
			got = append(got, "!")
		} else {
			got = append(got, string(l))
		}
	}
}

func TestReader(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want []string // "!" is a line refused as too long
	}{
		{"a\nbb\n", 2, []string{"a", "bb"}},
		{"a\nbbb\ncc", 2, []string{"a", "!", "cc"}},
		{"abc", 2, []string{"!"}}, // the last line, without a newline, has the same cap
		{"ab", 2, []string{"ab"}},
		{"\n\nx\r\n", 5, []string{"", "", "x\r"}},
		{"", 5, nil},
		// Lines of exactly the cap pass; one byte more is refused; the
		// last line may lack its newline.
		{strings.Repeat("a", 8) + "\n" + strings.Repeat("b", 9) + "\n" + "cc", 8, []string{"aaaaaaaa", "!", "cc"}},
	}
	for _, c := range cases {
		if got := lines(t, strings.NewReader(c.in), c.max); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%q (max %d): %q, want %q", c.in, c.max, got, c.want)
		}
		// Byte by byte, the lines are the same.
		if got := lines(t, iotest.OneByteReader(strings.NewReader(c.in)), c.max); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%q (max %d) one byte at a time: %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func TestReaderLongLinesAcrossBuffers(t *testing.T) {
	// Lines longer than the 64 KiB read buffer: one at the cap passes, one
	// past it is refused, and reading goes on after it.
	const max = 200 << 10
	ok := strings.Repeat("a", max)
	long := strings.Repeat("b", max+1)
	got := lines(t, strings.NewReader(ok+"\n"+long+"\nnext\n"+long), max)
	if len(got) != 4 || got[0] != ok || got[1] != "!" || got[2] != "next" || got[3] != "!" {
		short := make([]string, len(got))
		for i, g := range got {
			short[i] = fmt.Sprintf("%d bytes", len(g))
		}
		t.Fatalf("lines = %v", short)
	}
}

func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	lr := NewReader(io.MultiReader(strings.NewReader("a\n"), iotest.ErrReader(boom)), 8)
	if l, tooLong, err := lr.Next(); string(l) != "a" || tooLong || err != nil {
		t.Fatalf("1: %q %v %v", l, tooLong, err)
	}
	if _, _, err := lr.Next(); !errors.Is(err, boom) {
		t.Fatalf("2: err = %v, want the reader's error", err)
	}
}

// filler yields n bytes of 'x' then a newline and "end\n", without holding
// them in memory.
type filler struct{ n int }

func (f *filler) Read(p []byte) (int, error) {
	if f.n < 0 {
		return 0, io.EOF
	}
	i := 0
	for ; i < len(p) && f.n > 0; i, f.n = i+1, f.n-1 {
		p[i] = 'x'
	}
	if f.n == 0 && i+5 <= len(p) {
		i += copy(p[i:], "\nend\n")
		f.n = -1
	}
	return i, nil
}

func TestReaderDoesNotHoldLongLines(t *testing.T) {
	const max = 1 << 20
	lr := NewReader(&filler{n: 10 << 20}, max) // a 10 MB line, a 1 MiB cap
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, tooLong, err := lr.Next()
	l, _, err2 := lr.Next()
	runtime.ReadMemStats(&after)
	if !tooLong || err != nil || string(l) != "end" || err2 != nil {
		t.Fatalf("tooLong %v err %v, then %q %v", tooLong, err, l, err2)
	}
	// At most the cap twice (buffer growth) plus slack, far below 10 MB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*max+(256<<10) {
		t.Errorf("allocated %d bytes for a 10 MB line with a %d-byte cap", alloc, max)
	}
}

func TestNewReaderPanicsOnZeroMax(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewReader(r, 0) did not panic")
		}
	}()
	NewReader(strings.NewReader(""), 0)
}

func BenchmarkReader(b *testing.B) {
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"browser","arguments":{"action":"observe"}}}` + "\n"
	in := strings.Repeat(line, 1000)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		lr := NewReader(strings.NewReader(in), 4<<20)
		for {
			if _, _, err := lr.Next(); err != nil {
				break
			}
		}
	}
}
