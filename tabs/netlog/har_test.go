package netlog_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// harTools installs the HAR readers of testdata/har/package.json
// (har-validator 5.1.5 with the HAR 1.2 schemas of har-schema, and
// har-to-k6 0.14.16) with npm into a directory under os.TempDir(), kept
// between runs and keyed by package.json, and returns node and that
// directory. It skips when node or npm is missing, unless CI is set.
func harTools(t *testing.T) (node, dir string) {
	t.Helper()
	missing := func(what string) {
		msg := what + " is not installed: the HAR check reads the HAR with npm's har-validator and har-to-k6 (apt-get install -y nodejs npm)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		missing("npm")
	}
	pkg, err := os.ReadFile("testdata/har/package.json")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("testdata/har/check.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pkg)
	dir = filepath.Join(os.TempDir(), "tabpilot-har-npm-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "check.js"), script, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "har-to-k6", "package.json")); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "har-validator", "package.json")); err == nil {
			return node, dir
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install in %s: %v\n%s", dir, err, out)
	}
	return node, dir
}

type harVerdict struct {
	Schema string   `json:"schema"`
	K6     string   `json:"k6"`
	URLs   []string `json:"urls"`
}

// checkFile runs testdata/har/check.js on path.
func checkFile(t *testing.T, path string) harVerdict {
	t.Helper()
	node, dir := harTools(t)
	cmd := exec.Command(node, "check.js", path)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check.js %s: %v\n%s", path, err, out)
	}
	var v harVerdict
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("check.js printed %q: %v", out, err)
	}
	return v
}

// readHAR checks that the HAR at path passes the HAR 1.2 schema and that
// har-to-k6 turns it into a script requesting the page's URLs.
func readHAR(t *testing.T, path, base string) {
	t.Helper()
	v := checkFile(t, path)
	if v.Schema != "ok" {
		t.Errorf("har-validator: %s", v.Schema)
	}
	if v.K6 != "ok" {
		t.Errorf("har-to-k6: %s", v.K6)
	}
	for _, u := range []string{base + "/data.json", base + "/submit", base + "/missing", base + "/final"} {
		if !slices.Contains(v.URLs, u) {
			t.Errorf("har-to-k6's script requests %q, not %s", v.URLs, u)
		}
	}
}

// TestHARReadersRefuseBadHAR checks that the readers are not vacuous: a
// HAR without a request method and without timings fails both.
func TestHARReadersRefuseBadHAR(t *testing.T) {
	bad := `{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"pages":[],"entries":[{"startedDateTime":"2024-01-01T00:00:00.000Z","time":1,` +
		`"request":{"url":"http://127.0.0.1/","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"queryString":[],"headersSize":-1,"bodySize":0},` +
		`"response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"content":{"size":0,"mimeType":"x"},"redirectURL":"","headersSize":-1,"bodySize":-1},"cache":{}}]}}`
	path := filepath.Join(t.TempDir(), "bad.har")
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	v := checkFile(t, path)
	if v.Schema == "ok" || v.K6 == "ok" {
		t.Errorf("a HAR without method and timings passed: schema %q, har-to-k6 %q", v.Schema, v.K6)
	}
}
