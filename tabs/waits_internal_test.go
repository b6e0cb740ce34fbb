package tabs

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDownloadNames(t *testing.T) {
	for in, want := range map[string]string{
		"report.txt": "report.txt", "../../etc/passwd": "passwd", "": "download", ".bashrc": "bashrc",
		`C:\Users\x\file.pdf`: "file.pdf", "a\x00b.txt": "ab.txt", "/": "download",
	} {
		if got := safeFileName(in); got != want {
			t.Errorf("safeFileName(%q) = %q, want %q", in, got, want)
		}
	}
	dir := t.TempDir()
	p, err := uniquePath(dir, "a.txt")
	if err != nil || p != filepath.Join(dir, "a.txt") {
		t.Fatalf("uniquePath = %q, %v", p, err)
	}
	os.WriteFile(p, nil, 0o600)
	os.WriteFile(filepath.Join(dir, "a (1).txt"), nil, 0o600)
	if p, _ := uniquePath(dir, "a.txt"); p != filepath.Join(dir, "a (2).txt") {
		t.Fatalf("uniquePath with two taken = %q", p)
	}
}

func TestActionWait(t *testing.T) {
	near := func(got, want time.Duration) bool { return got <= want && got > want-200*time.Millisecond }
	if got := actionWait(context.Background()); got != autoWait {
		t.Errorf("no deadline: %v, want %v", got, autoWait)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got := actionWait(ctx); !near(got, 9*time.Second) {
		t.Errorf("10s deadline: %v, want about 9s", got)
	}
	if got := actionWait(WithActionTimeout(ctx, 2*time.Second)); got != 2*time.Second {
		t.Errorf("2s action timeout: %v", got)
	}
	short, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if got := actionWait(WithActionTimeout(short, 5*time.Second)); !near(got, 800*time.Millisecond) {
		t.Errorf("1s deadline, 5s action timeout: %v, want about 800ms", got)
	}
}

func TestDialogArticle(t *testing.T) {
	for typ, want := range map[string]string{"alert": "an alert", "confirm": "a confirm", "prompt": "a prompt", "beforeunload": "a beforeunload"} {
		if got := (&Dialog{Type: typ}).Article(); got != want {
			t.Errorf("%s: %q, want %q", typ, got, want)
		}
	}
}
