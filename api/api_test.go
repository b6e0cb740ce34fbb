package api

import (
	"encoding/json"
	"strconv"
	"testing"
)

func TestTargetJSON(t *testing.T) {
	for in, want := range map[string]Target{`{"target": 12}`: "12", `{"target": "#go"}`: "#go", `{}`: ""} {
		var r ActRequest
		if err := json.Unmarshal([]byte(in), &r); err != nil || r.Target != want {
			t.Errorf("%s: target %q, %v; want %q", in, r.Target, err, want)
		}
	}
	var r ActRequest
	if err := json.Unmarshal([]byte(`{"target": true}`), &r); err == nil {
		t.Error("a boolean target decoded")
	}
}

// BenchmarkResultText joins the text of a run that called display 40,000
// times (the CLI prints Text()).
func BenchmarkResultText(b *testing.B) {
	r := &Result{}
	for i := range 40000 {
		r.Content = append(r.Content, TextContent("x"+strconv.Itoa(i)))
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(r.Text()) == 0 {
			b.Fatal("empty")
		}
	}
}
