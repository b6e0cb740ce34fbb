package script_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
	"github.com/tabpilot/tabpilot/tabs/script"
)

// Display text is bounded per run (DefaultMaxDisplayBytes, 100 000 bytes
// counting one per item): 99 displays of 1000 bytes fit, the 100th would
// pass the bound, so it and the 200 after it are left out, and one item
// says so before the return value.
func TestDisplayCapped(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `
const s = 'x'.repeat(1000);
for (let i = 0; i < 300; i++) display(s);
return 'done';
`, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(out)
	if len(got) != 101 {
		t.Fatalf("%d text items, want 101 (99 displays, the note, the return value)", len(got))
	}
	for i, s := range got[:99] {
		if s != strings.Repeat("x", 1000) {
			t.Fatalf("item %d is %d bytes %.10q…, want 1000 x", i, len(s), s)
		}
	}
	want := []string{"… 201 more display() outputs (201 KB) left out: the run's output is capped at 100 KB", "done"}
	if got[99] != want[0] || got[100] != want[1] {
		t.Fatalf("last items = %q, want %q", got[99:], want)
	}
}

// One display longer than the bound is kept whole (the service cuts it
// and saves it to a file); the displays after it are left out.
func TestDisplayFirstLongItemKept(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `
display('y'.repeat(150000));
display('z');
display('é');
`, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(out)
	want := "… 2 more display() outputs (3 bytes) left out: the run's output is capped at 100 KB"
	if len(got) != 2 || got[0] != strings.Repeat("y", 150000) || got[1] != want {
		t.Fatalf("got %d items, last %q; want the 150000 y and %q", len(got), got[len(got)-1], want)
	}
}

// Options.MaxDisplayBytes sets the bound; a negative one means none.
func TestDisplayBoundOption(t *testing.T) {
	t.Parallel()
	code := `for (let i = 0; i < 5; i++) display('abc'); display({type: 'image', data: 'AAAA'}); return 7;`
	t.Run("10", func(t *testing.T) {
		t.Parallel()
		out, err := runCodeWith(t, code, 10*time.Second, &script.Options{MaxDisplayBytes: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range out.Content {
			got = append(got, c.Type+":"+c.Text)
		}
		want := []string{"text:abc", "text:abc", "image:",
			"text:… 3 more display() outputs (9 bytes) left out: the run's output is capped at 10 bytes", "text:7"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("content = %q, want %q", got, want)
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		out, err := runCodeWith(t, `const s = 'x'.repeat(1000); for (let i = 0; i < 300; i++) display(s);`, 20*time.Second,
			&script.Options{MaxDisplayBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		if got := texts(out); len(got) != 300 || got[299] != strings.Repeat("x", 1000) {
			t.Fatalf("%d text items, want the 300 displays", len(got))
		}
	})
}

// A run busy calling display in a loop still ends at its deadline as a
// timeout, and keeps the output within the bound: 99 displays of 1000
// bytes (1001 with the newline) fit in 100 000 bytes, then the note. The
// items are large so that the bound is reached in the first milliseconds
// of the loop, however slow the machine.
func TestDisplayLoopTimesOut(t *testing.T) {
	t.Parallel()
	out, err := runCode(t, `const s = 'x'.repeat(1000); for (;;) display(s);`, 2*time.Second)
	if errcode.Of(err) != errcode.Timeout {
		t.Fatalf("err = %v (%s), want timeout", err, errcode.Of(err))
	}
	got := texts(out)
	if len(got) != 100 {
		t.Fatalf("%d text items, want 100", len(got))
	}
	for i, s := range got[:99] {
		if s != strings.Repeat("x", 1000) {
			t.Fatalf("item %d = %.20q…", i, s)
		}
	}
	if note := got[99]; !loopNote.MatchString(note) {
		t.Fatalf("note = %q, want it to match %s", note, loopNote)
	}
}

var loopNote = regexp.MustCompile(`^… [1-9]\d* more display\(\) outputs \((\d+ bytes|\d+ KB|\d+\.\d MB)\) left out: the run's output is capped at 100 KB$`)

// BenchmarkDisplay measures a whole run, on a real tab, whose code calls
// display n times; the time per run should grow linearly with n, and past
// the bound a display only counts bytes.
func BenchmarkDisplay(b *testing.B) {
	cases := []struct{ name, code string }{
		{"x-1k", "for (let i = 0; i < 1000; i++) display('x');"},
		{"x-10k", "for (let i = 0; i < 10000; i++) display('x');"},
		{"x-100k", "for (let i = 0; i < 100000; i++) display('x');"},
		{"1KB-300", "const s = 'x'.repeat(1000); for (let i = 0; i < 300; i++) display(s);"},
		{"obj-10k", "for (let i = 0; i < 10000; i++) display({i});"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			name := fmt.Sprintf("bench-display-%s-%d", c.name, time.Now().UnixNano())
			if _, err := sup.Open(context.Background(), tabs.OpenOptions{Name: name, URL: srv.URL, WaitUntil: "load"}); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { sup.Close(context.Background(), name, false, 0) })
			b.ReportAllocs()
			for b.Loop() {
				s := script.New(c.code, nil)
				if err := sup.Run(context.Background(), name, time.Minute, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
