package script

import (
	"encoding/base64"
	"fmt"
	"log/slog"

	"github.com/dop251/goja"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

// emitValue appends a value to the output: an image object as an image, a
// string as text, anything else as pretty JSON (null as "null": a caller
// that asked for a value learns it was null). With final (the return
// value), undefined adds nothing; without it (display), text is subject
// to the display budget.
func (s *Script) emitValue(vm *goja.Runtime, v goja.Value, final bool) error {
	if v == nil || goja.IsUndefined(v) {
		return nil
	}
	if o, ok := v.(*goja.Object); ok {
		if t := o.Get("type"); t != nil && t.String() == "image" {
			if d := o.Get("data"); d != nil && !goja.IsUndefined(d) {
				data, err := base64.StdEncoding.DecodeString(d.String())
				if err != nil {
					return &tabs.Error{Code: errcode.ScriptError, Msg: "display: image data is not base64"}
				}
				mt := "image/png"
				if m := o.Get("mimeType"); m != nil && !goja.IsUndefined(m) {
					mt = m.String()
				}
				s.add(Content{Type: "image", MimeType: mt, Data: data})
				return nil
			}
		}
	}
	text, ok := v.Export().(string)
	if !ok {
		js, err := stringify(vm, v)
		if err != nil {
			return &tabs.Error{Code: errcode.ScriptError, Msg: "cannot serialise the value: " + err.Error()}
		}
		text = js
	}
	if final {
		s.add(Content{Type: "text", Text: text})
		return nil
	}
	s.display(text)
	return nil
}

// add appends items to the output, unless Run has already read it.
func (s *Script) add(cs ...Content) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sealed {
		s.log.Debug("output after the run ended left out", "tab", s.tab.Name(), "items", len(cs))
		return
	}
	s.out.Content = append(s.out.Content, cs...)
}

// display appends a display's text to the output within the display
// budget (Options.MaxDisplayBytes), or counts it as left out.
func (s *Script) display(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &s.disp
	if s.sealed || b.closed {
		s.log.Debug("display after the run ended left out", "tab", s.tab.Name(), "bytes", len(text))
		return
	}
	size := len(text) + 1
	if b.limit >= 0 && !b.full && b.used > 0 && b.used+size > b.limit {
		b.full = true
	}
	if b.full {
		b.dropped++
		b.droppedBytes += int64(len(text))
		return
	}
	s.out.Content = append(s.out.Content, Content{Type: "text", Text: text})
	b.used += size
	if b.limit >= 0 && b.used >= b.limit {
		b.full = true
	}
}

// closeDisplayLocked ends the displays: when some were left out, one text
// item says how many. s.mu is held.
func (s *Script) closeDisplayLocked() {
	b := &s.disp
	if b.closed || s.sealed {
		return
	}
	b.closed = true
	if b.dropped == 0 {
		return
	}
	outputs := "outputs"
	if b.dropped == 1 {
		outputs = "output"
	}
	s.out.Content = append(s.out.Content, Content{Type: "text", Text: fmt.Sprintf(
		"… %d more display() %s (%s) left out: the run's output is capped at %s",
		b.dropped, outputs, sizeText(b.droppedBytes), sizeText(int64(b.limit)))})
}

// sizeText renders n bytes for a reader: "1 byte", "612 bytes", "612 KB", "1.5 MB"
// (decimal units).
func sizeText(n int64) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1_000_000:
		return fmt.Sprintf("%d KB", (n+500)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
}

func stringify(vm *goja.Runtime, v goja.Value) (string, error) {
	j := vm.Get("JSON").ToObject(vm)
	f, _ := goja.AssertFunction(j.Get("stringify"))
	r, err := f(j, v, goja.Null(), vm.ToValue(2))
	if err != nil {
		return "", err
	}
	if goja.IsUndefined(r) {
		return "undefined", nil
	}
	return r.String(), nil
}

// printer sends console output to the log.
type printer struct {
	log *slog.Logger
	tab string
}

func (p *printer) Log(s string) { p.log.Info(s, "src", "console", "tab", p.tab) }

func (p *printer) Warn(s string) { p.log.Warn(s, "src", "console", "tab", p.tab) }

func (p *printer) Error(s string) { p.log.Error(s, "src", "console", "tab", p.tab) }
