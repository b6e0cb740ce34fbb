package pagecore

import (
	"os"
	"path/filepath"
	"testing"
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

func TestDialogArticle(t *testing.T) {
	for typ, want := range map[string]string{"alert": "an alert", "confirm": "a confirm", "prompt": "a prompt", "beforeunload": "a beforeunload"} {
		if got := (&Dialog{Type: typ}).Article(); got != want {
			t.Errorf("%s: %q, want %q", typ, got, want)
		}
	}
}
