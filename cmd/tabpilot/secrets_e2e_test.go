package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cliSecret = "Cli-s3cret&value"

func writeSecrets(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSecretsRefused: a secrets file that is not private, or holds a
// value too short to redact, stops the CLI and the stdio modes at start,
// naming the file (and the line) but never the value.
func TestSecretsRefused(t *testing.T) {
	open := writeSecrets(t, "PW="+cliSecret+"\n", 0o644)
	short := writeSecrets(t, "PW="+cliSecret+"\nPIN=x1\n", 0o600)
	for _, c := range []struct {
		env  []string
		args []string
		want []string
	}{
		{[]string{"TABPILOT_SECRETS=" + open}, []string{"tabs"}, []string{open, "mode 0644", "0600 or stricter"}},
		{nil, []string{"serve", "--secrets", open}, []string{open, "0600 or stricter"}},
		{nil, []string{"open", "--secrets", short, "about:blank"}, []string{short, "line 2", "PIN", "shorter than 4 bytes"}},
		{nil, []string{"daemon", "--secrets", short}, []string{short, "line 2"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			e := newEnv(t, c.env...)
			stdout, stderr, code := e.run(c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stdout+stderr, "s3cret") || strings.Contains(stderr, "x1") {
				t.Errorf("the error quotes a value:\n%s", stderr)
			}
		})
	}
}

// TestCLISecrets: the CLI's type sends a {{secret:NAME}}, a run's secret()
// fills one, and neither the CLI's output nor the daemon's log shows the
// value (a run that reverses it is the documented limit: the page holds
// it).
func TestCLISecrets(t *testing.T) {
	e, marker := browserEnv(t)
	file := writeSecrets(t, "PW="+cliSecret+"\n", 0o600)
	e.vars = append(e.vars, "TABPILOT_SECRETS="+file, "TABPILOT_LOG_LEVEL=debug")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Secrets</title>
<label>Password <input id="pw" type="password"></label>
<label>Plain <input id="plain"></label>
<script>document.getElementById("plain").addEventListener("input", e => console.log("plain is " + e.target.value));</script>`)
	}))
	defer srv.Close()
	var out strings.Builder
	out.WriteString(mustRun(t, e, "open", srv.URL+"/"))
	out.WriteString(mustRun(t, e, "type", "#pw", "{{secret:PW}}", "--json"))
	out.WriteString(mustRun(t, e, "fill", "#plain", "{{secret:PW}}"))
	obs := mustRun(t, e, "observe")
	out.WriteString(obs)
	if !strings.Contains(obs, `"Plain" ••••`) && !strings.Contains(obs, `••••`) {
		t.Errorf("observe does not mask the field: %s", obs)
	}
	got := mustRun(t, e, "run", "-e", `await tab.fill("#plain", secret("PW")); return [...await tab.value("#pw")].reverse().join("") + " " + await tab.value("#plain")`)
	out.WriteString(got)
	rev := []rune(cliSecret)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if strings.TrimSpace(got) != string(rev)+" ••••" {
		t.Errorf("run = %q, want the reversed value and ••••", got)
	}
	out.WriteString(mustRun(t, e, "console"))
	stdout, stderr, code := e.run("type", "#pw", "{{secret:NOPE}}")
	if code != 1 || !strings.Contains(stderr, "unknown secret NOPE") {
		t.Errorf("unknown secret: exit %d, %q %q", code, stdout, stderr)
	}
	mustRun(t, e, "stop")
	checkNoBrowser(t, marker)
	log, err := os.ReadFile(filepath.Join(e.dir(), "default.log"))
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"the CLI's output": out.String() + stdout + stderr, "the daemon's log": string(log)} {
		if strings.Contains(text, cliSecret) || strings.Contains(text, "Cli-s3cret%26value") {
			t.Errorf("%s holds the secret:\n%s", what, text)
		}
	}
	if !strings.Contains(string(log), "plain is ••••") && !strings.Contains(out.String(), "plain is ••••") {
		t.Errorf("the page's console.log of the value is neither in the log nor the console listing, masked")
	}
}
