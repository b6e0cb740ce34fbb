package netlog

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/runtime"
)

// FormatArgs renders the arguments of a console call as DevTools prints
// them: joined by spaces, a string unquoted, a number or boolean as its
// literal, an object as its preview ({a: 1, b: 'x'}, [1, 2]) or
// description, and when the first argument is a string its %s, %d, %i,
// %f, %o, %O and %c (dropped, CSS) are replaced by the next arguments and
// %% by %.
func FormatArgs(args []*runtime.RemoteObject) string {
	var parts []string
	rest := args
	if len(args) > 0 && args[0] != nil && args[0].Type == runtime.RemoteObjectTypeString {
		f := str(args[0])
		if strings.Contains(f, "%") {
			var text string
			text, rest = substitute(f, args[1:])
			parts = append(parts, text)
		} else {
			parts, rest = append(parts, f), args[1:]
		}
	}
	for _, a := range rest {
		parts = append(parts, render(a, true))
	}
	return strings.Join(parts, " ")
}

// substitute applies the format f to args and returns the text and the
// arguments it did not use.
func substitute(f string, args []*runtime.RemoteObject) (string, []*runtime.RemoteObject) {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' || i+1 >= len(f) {
			b.WriteByte(c)
			continue
		}
		verb := f[i+1]
		if verb == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if !strings.ContainsRune("sdifoOc", rune(verb)) {
			b.WriteByte(c)
			continue
		}
		i++
		if len(args) == 0 {
			b.WriteByte('%')
			b.WriteByte(verb)
			continue
		}
		a := args[0]
		args = args[1:]
		switch verb {
		case 's':
			b.WriteString(render(a, true))
		case 'd', 'i':
			if n, ok := number(a); ok && !math.IsNaN(n) && !math.IsInf(n, 0) {
				b.WriteString(strconv.FormatFloat(math.Trunc(n), 'f', -1, 64))
			} else {
				b.WriteString("NaN")
			}
		case 'f':
			if n, ok := number(a); ok {
				b.WriteString(jsNumber(n))
			} else {
				b.WriteString("NaN")
			}
		case 'o', 'O':
			b.WriteString(render(a, false))
		case 'c':
		}
	}
	return b.String(), args
}

// str returns the value of a string object.
func str(o *runtime.RemoteObject) string {
	var s string
	if json.Unmarshal([]byte(o.Value), &s) != nil {
		return o.Description
	}
	return s
}

// number returns the numeric value of a number object.
func number(o *runtime.RemoteObject) (float64, bool) {
	if o == nil || o.Type != runtime.RemoteObjectTypeNumber {
		return 0, false
	}
	switch o.UnserializableValue {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	case "-0":
		return math.Copysign(0, -1), true
	}
	n, err := strconv.ParseFloat(string(o.Value), 64)
	return n, err == nil
}

func jsNumber(n float64) string {
	switch {
	case math.IsNaN(n):
		return "NaN"
	case math.IsInf(n, 1):
		return "Infinity"
	case math.IsInf(n, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(n, 'f', -1, 64)
}

// render prints one remote object; top says it stands alone (a string is
// unquoted) rather than inside a %o.
func render(o *runtime.RemoteObject, top bool) string {
	if o == nil {
		return "undefined"
	}
	switch o.Type {
	case runtime.RemoteObjectTypeString:
		if top {
			return str(o)
		}
		return quote(str(o))
	case runtime.RemoteObjectTypeNumber, runtime.RemoteObjectTypeBigint:
		if o.UnserializableValue != "" {
			return string(o.UnserializableValue)
		}
		if len(o.Value) > 0 {
			return string(o.Value)
		}
		return o.Description
	case runtime.RemoteObjectTypeBoolean:
		return string(o.Value)
	case runtime.RemoteObjectTypeUndefined:
		return "undefined"
	case runtime.RemoteObjectTypeSymbol:
		return o.Description
	case runtime.RemoteObjectTypeFunction:
		return "ƒ " + funcName(o.Description)
	}
	switch o.Subtype {
	case runtime.RemoteObjectSubtypeNull:
		return "null"
	case runtime.RemoteObjectSubtypeError, runtime.RemoteObjectSubtypeNode, runtime.RemoteObjectSubtypeRegexp, runtime.RemoteObjectSubtypeDate:
		return o.Description
	}
	if o.Preview != nil {
		return preview(o.Preview)
	}
	if len(o.Value) > 0 {
		return string(o.Value)
	}
	return o.Description
}

// funcName returns "name()" from a function's source text.
func funcName(src string) string {
	s := strings.TrimSpace(src)
	s = strings.TrimPrefix(s, "async ")
	if rest, ok := strings.CutPrefix(s, "function"); ok {
		rest = strings.TrimLeft(rest, "* ")
		if i := strings.IndexByte(rest, '('); i >= 0 {
			return strings.TrimSpace(rest[:i]) + "()"
		}
	}
	if i := strings.IndexByte(s, '('); i > 0 && !strings.ContainsAny(s[:i], " =") {
		return s[:i] + "()"
	}
	return "anonymous()"
}

func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "\\'") + "'"
}

// preview prints an object preview as DevTools does: {a: 1, b: 'x'},
// [1, 2], Map(1) {'k' => 1}, Foo {a: 1}, with … when it overflowed.
func preview(p *runtime.ObjectPreview) string {
	var items []string
	switch p.Subtype {
	case runtime.ObjectPreviewSubtypeMap, runtime.ObjectPreviewSubtypeSet:
		for _, e := range p.Entries {
			if e == nil || e.Value == nil {
				continue
			}
			v := preview(e.Value)
			if e.Key != nil {
				v = preview(e.Key) + " => " + v
			}
			items = append(items, v)
		}
	default:
		for _, pp := range p.Properties {
			if pp == nil {
				continue
			}
			v := propValue(pp)
			if p.Subtype != runtime.ObjectPreviewSubtypeArray && p.Subtype != runtime.ObjectPreviewSubtypeTypedarray {
				v = pp.Name + ": " + v
			}
			items = append(items, v)
		}
	}
	if p.Overflow {
		items = append(items, "…")
	}
	body := strings.Join(items, ", ")
	switch p.Subtype {
	case runtime.ObjectPreviewSubtypeArray, runtime.ObjectPreviewSubtypeTypedarray:
		return "[" + body + "]"
	case runtime.ObjectPreviewSubtypeMap, runtime.ObjectPreviewSubtypeSet:
		return p.Description + " {" + body + "}"
	case runtime.ObjectPreviewSubtypeNull:
		return "null"
	}
	if p.Type != runtime.ObjectPreviewTypeObject {
		return p.Description
	}
	if p.Subtype != "" {
		return p.Description
	}
	if p.Description != "" && p.Description != "Object" {
		return p.Description + " {" + body + "}"
	}
	return "{" + body + "}"
}

func propValue(pp *runtime.PropertyPreview) string {
	switch pp.Type {
	case runtime.PropertyPreviewTypeString:
		return quote(pp.Value)
	case runtime.PropertyPreviewTypeFunction:
		return "ƒ"
	case runtime.PropertyPreviewTypeAccessor:
		return "(...)"
	}
	if pp.ValuePreview != nil && pp.Subtype != runtime.PropertyPreviewSubtypeNull {
		return preview(pp.ValuePreview)
	}
	return pp.Value
}
