package observe

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp/jsonv2"
)

// axProps holds the AX properties Build reads from a node.
type axProps struct {
	focusable, focused, disabled, hidden, required, readonly, multiselectable, modal bool
	// tristate or token values, "" when absent.
	checked, pressed, expanded, selected, invalid, hasPopup, editable string
	valuetext, url                                                    string
	level                                                             int
}

func readProps(n *accessibility.Node) axProps {
	var p axProps
	for _, pr := range n.Properties {
		if pr == nil || pr.Value == nil {
			continue
		}
		raw := pr.Value.Value
		isTrue := string(raw) == "true"
		switch pr.Name {
		case accessibility.PropertyNameFocusable:
			p.focusable = isTrue
		case accessibility.PropertyNameFocused:
			p.focused = isTrue
		case accessibility.PropertyNameDisabled:
			p.disabled = isTrue
		case accessibility.PropertyNameHidden:
			p.hidden = isTrue
		case accessibility.PropertyNameRequired:
			p.required = isTrue
		case accessibility.PropertyNameReadonly:
			p.readonly = isTrue
		case accessibility.PropertyNameMultiselectable:
			p.multiselectable = isTrue
		case accessibility.PropertyNameModal:
			p.modal = isTrue
		case accessibility.PropertyNameChecked:
			p.checked = rawString(raw)
		case accessibility.PropertyNamePressed:
			p.pressed = rawString(raw)
		case accessibility.PropertyNameExpanded:
			p.expanded = rawString(raw)
		case accessibility.PropertyNameSelected:
			p.selected = rawString(raw)
		case accessibility.PropertyNameInvalid:
			p.invalid = rawString(raw)
		case accessibility.PropertyNameHasPopup:
			p.hasPopup = rawString(raw)
		case accessibility.PropertyNameEditable:
			p.editable = rawString(raw)
		case accessibility.PropertyNameValuetext:
			p.valuetext = rawString(raw)
		case accessibility.PropertyNameURL:
			p.url = rawString(raw)
		case accessibility.PropertyNameLevel:
			for _, c := range raw {
				if c < '0' || c > '9' {
					break
				}
				p.level = p.level*10 + int(c-'0')
			}
		}
	}
	return p
}

// states returns the short state words of an element, in a fixed order.
func (p *axProps) states(role string) []string {
	var s []string
	add := func(w string) { s = append(s, w) }
	if p.disabled {
		add("disabled")
	}
	switch p.checked {
	case "true":
		add("checked")
	case "mixed":
		add("mixed")
	}
	if p.selected == "true" {
		add("selected")
	}
	switch p.expanded {
	case "true":
		add("expanded")
	case "false":
		add("collapsed")
	}
	switch p.pressed {
	case "true":
		add("pressed")
	case "mixed":
		add("mixed")
	}
	if p.required {
		add("required")
	}
	if p.readonly {
		add("readonly")
	}
	if p.invalid != "" && p.invalid != "false" {
		add("invalid")
	}
	if p.focused {
		add("focused")
	}
	if p.multiselectable {
		add("multiselectable")
	}
	if p.hasPopup != "" && p.hasPopup != "false" && role != "combobox" {
		add("haspopup")
	}
	if p.modal {
		add("modal")
	}
	return s
}

// rawString returns a raw JSON value as a string: a JSON string unquoted,
// anything else (numbers, booleans) as written.
func rawString(raw jsonv2.Value) string {
	for len(raw) > 0 && isJSONSpace(raw[0]) {
		raw = raw[1:]
	}
	for len(raw) > 0 && isJSONSpace(raw[len(raw)-1]) {
		raw = raw[:len(raw)-1]
	}
	if len(raw) == 0 {
		return ""
	}
	if raw[0] != '"' {
		if string(raw) == "null" {
			return ""
		}
		return string(raw)
	}
	if len(raw) >= 2 && raw[len(raw)-1] == '"' {
		inner := raw[1 : len(raw)-1]
		plain := true
		for _, c := range inner {
			if c == '\\' {
				plain = false
				break
			}
		}
		if plain {
			return string(inner)
		}
	}
	if s, ok := unquote(raw); ok {
		return s
	}
	var s string
	if err := jsonv2.Unmarshal(raw, &s); err != nil {
		return ""
	}
	return s
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// unquote decodes a JSON string with escapes, or returns false when it
// is not one it can decode (the caller then asks the JSON package).
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(in) {
			return "", false
		}
		switch in[i] {
		case '"', '\\', '/':
			out = append(out, in[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(in[i+1:])
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 < len(in) && in[i+1] == '\\' && in[i+2] == 'u' {
					if r2, ok := hex4(in[i+3:]); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							r = d
							i += 6
						}
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func valueString(v *accessibility.Value) string {
	if v == nil {
		return ""
	}
	return rawString(v.Value)
}
