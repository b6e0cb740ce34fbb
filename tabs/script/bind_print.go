package script

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/dop251/goja"

	"github.com/tabpilot/tabpilot/errcode"
	"github.com/tabpilot/tabpilot/tabs"
)

// bindPrintEmulate installs tab.pdf and tab.emulate (issue 21).
func (s *Script) bindPrintEmulate(vm *goja.Runtime, t *tabs.Tab, method methodFunc) {
	method("pdf", func(c goja.FunctionCall) goja.Value {
		var o tabs.PDFOptions
		if err := optionsArg(vm, c.Argument(0), "pdf", &o); err != nil {
			return s.reject(err)
		}
		return s.async(func(ctx context.Context) (any, error) { return t.PDF(ctx, o) })
	})
	method("emulate", func(c goja.FunctionCall) goja.Value {
		var o struct {
			tabs.EmulateOptions
			Reset bool `json:"reset"`
		}
		if err := optionsArg(vm, c.Argument(0), "emulate", &o); err != nil {
			return s.reject(err)
		}
		if o.Reset && o.EmulateOptions != (tabs.EmulateOptions{}) {
			return s.reject(tabs.Errorf(errcode.BadRequest, "emulate({reset: true}) takes no other option: reset, then emulate again"))
		}
		raw, _ := json.Marshal(o)
		return s.async(s.audited("emulate", "", string(raw), func(ctx context.Context) (any, error) {
			if o.Reset {
				return t.ResetEmulation(ctx)
			}
			return t.Emulate(ctx, o.EmulateOptions)
		}))
	})
}

// optionsArg decodes a method's options object into v strictly: an
// unknown option is a bad_request naming it.
func optionsArg(vm *goja.Runtime, a goja.Value, name string, v any) error {
	if a == nil || goja.IsUndefined(a) || goja.IsNull(a) {
		return nil
	}
	js, err := stringify(vm, a)
	if err != nil {
		return tabs.Errorf(errcode.BadRequest, "%s: the options are not JSON: %v", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(js)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return tabs.Errorf(errcode.BadRequest, "%s options: %s", name, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}
