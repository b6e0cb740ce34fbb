package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The conformance tests are golden exchanges: each testdata/conformance
// file is a txtar archive whose "client" file holds the client's messages,
// one per line, and whose "server" file holds what the server writes, one
// message per line. The test sends each client line to Serve (over the
// shared service, hence a real Chromium) and waits for its answer before
// sending the next, so the exchange is deterministic; then it closes the
// input and checks that Serve returns nil. In the client lines {{URL}} is
// the test pages' server. In the server lines that URL is {{URL}} again,
// image data (checked to decode as an image first) is {{IMAGE}}, and a
// screenshot's size in bytes and its file are {{BYTES}} and {{FILE}}.
// go test -run TestConformance -update rewrites the server files.

func TestConformance(t *testing.T) {
	skipShort(t)
	files, err := filepath.Glob("testdata/conformance/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance files: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			runConformance(t, f)
		})
	}
}

func runConformance(t *testing.T, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ar := parseTxtar(b)
	client, ok := ar.file("client")
	if !ok {
		t.Fatalf("%s has no client file", file)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), inR, outW, svc, &Options{Version: "test"})
		outW.Close()
	}()
	out := make(chan string)
	go func() {
		defer close(out)
		br := bufio.NewReaderSize(outR, 1<<20)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				out <- strings.TrimSuffix(l, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	var got []string
	recv := func(what string) {
		select {
		case l, ok := <-out:
			if !ok {
				t.Fatalf("the server closed its output; want the answer to %s", what)
			}
			got = append(got, normalize(t, l))
		case <-time.After(90 * time.Second):
			t.Fatalf("no answer to %s within 90s", what)
		}
	}
	for _, line := range lines(string(client)) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		line = strings.ReplaceAll(line, "{{URL}}", pageSrv.URL)
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("write %s: %v", line, err)
		}
		if answered(line) {
			recv(line)
		}
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve at the end of the input: %v, want nil", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Serve did not return after the input ended")
	}
	for l := range out {
		got = append(got, normalize(t, l))
	}
	gotText := strings.Join(got, "\n") + "\n"
	if *update {
		ar.set("server", []byte(gotText))
		if err := os.WriteFile(file, ar.format(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, _ := ar.file("server")
	if gotText != string(want) {
		wl, gl := lines(string(want)), got
		for i := 0; i < max(len(wl), len(gl)); i++ {
			var w, g string
			if i < len(wl) {
				w = wl[i]
			}
			if i < len(gl) {
				g = gl[i]
			}
			if w != g {
				t.Errorf("server message %d:\n got: %s\nwant: %s", i+1, g, w)
			}
		}
		t.Log("run with -update to rewrite the golden file")
	}
}

// answered reports whether the server answers a client line: everything
// but a well-formed notification or response gets one message back.
func answered(line string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		return true
	}
	id, hasID := m["id"]
	hasID = hasID && string(id) != "null" // an id of null makes a notification (go-sdk)
	version := string(m["jsonrpc"]) == `"2.0"`
	method, hasMethod := m["method"]
	if !hasMethod {
		return !version || !hasID // a response of the client is not answered
	}
	return hasID || !version || len(method) == 0 || method[0] != '"'
}

var (
	imageData = regexp.MustCompile(`"data":"([A-Za-z0-9+/=]*)"`)
	shotText  = regexp.MustCompile(`(Screenshot \d+: \d+x\d+ \S+, )\d+( bytes, [^;]*; saved to )[^"\\]+`)
)

// normalize replaces what varies from run to run in a server line.
func normalize(t *testing.T, line string) string {
	t.Helper()
	if !json.Valid([]byte(line)) {
		t.Errorf("the server wrote a line that is not JSON: %q", line)
	}
	line = strings.ReplaceAll(line, pageSrv.URL, "{{URL}}")
	line = imageData.ReplaceAllStringFunc(line, func(m string) string {
		data := imageData.FindStringSubmatch(m)[1]
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			t.Errorf("image data is not base64: %v", err)
		} else if cfg, format, err := image.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width == 0 || cfg.Height == 0 {
			t.Errorf("image data does not decode: %v (%s %dx%d)", err, format, cfg.Width, cfg.Height)
		}
		return `"data":"{{IMAGE}}"`
	})
	return shotText.ReplaceAllString(line, "${1}{{BYTES}}${2}{{FILE}}")
}

// txtar is a minimal reader and writer of the txtar format
// (golang.org/x/tools/txtar): a comment, then files each introduced by a
// line "-- name --".
type txtar struct {
	comment []byte
	names   []string
	data    [][]byte
}

func parseTxtar(b []byte) *txtar {
	ar := &txtar{}
	cur := -1
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(strings.TrimRight(l, "\n"), " --") {
			name := strings.TrimSuffix(strings.TrimPrefix(strings.TrimRight(l, "\n"), "-- "), " --")
			ar.names = append(ar.names, name)
			ar.data = append(ar.data, nil)
			cur++
			continue
		}
		if cur < 0 {
			ar.comment = append(ar.comment, l...)
		} else {
			ar.data[cur] = append(ar.data[cur], l...)
		}
	}
	return ar
}

func (ar *txtar) file(name string) ([]byte, bool) {
	for i, n := range ar.names {
		if n == name {
			return ar.data[i], true
		}
	}
	return nil, false
}

func (ar *txtar) set(name string, data []byte) {
	for i, n := range ar.names {
		if n == name {
			ar.data[i] = data
			return
		}
	}
	ar.names = append(ar.names, name)
	ar.data = append(ar.data, data)
}

func (ar *txtar) format() []byte {
	var b bytes.Buffer
	b.Write(ar.comment)
	for i, n := range ar.names {
		b.WriteString("-- " + n + " --\n")
		b.Write(ar.data[i])
	}
	return b.Bytes()
}
