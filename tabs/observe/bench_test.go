package observe

import (
	"strconv"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
)

// genInput makes a page of items/2 list items, each with its text, a link
// "Product i" and a button "Buy": items interactive elements, half of them
// sharing one name (so every Buy needs a context).
func genInput(items int) *Input {
	str := func(s string) *accessibility.Value {
		return &accessibility.Value{Type: accessibility.ValueTypeString, Value: jsonv2.Value(strconv.Quote(s))}
	}
	role := func(s string) *accessibility.Value {
		return &accessibility.Value{Type: accessibility.ValueTypeRole, Value: jsonv2.Value(strconv.Quote(s))}
	}
	focusable := &accessibility.Property{Name: accessibility.PropertyNameFocusable,
		Value: &accessibility.Value{Type: accessibility.ValueTypeBooleanOrUndefined, Value: jsonv2.Value("true")}}
	var nodes []*accessibility.Node
	next := 0
	add := func(parent accessibility.NodeID, r, name string, props ...*accessibility.Property) *accessibility.Node {
		next++
		n := &accessibility.Node{NodeID: accessibility.NodeID(strconv.Itoa(next)), Role: role(r), ParentID: parent,
			BackendDOMNodeID: cdp.BackendNodeID(next), Properties: props}
		if name != "" {
			n.Name = str(name)
		}
		if parent != "" {
			for _, p := range nodes {
				if p.NodeID == parent {
					p.ChildIDs = append(p.ChildIDs, n.NodeID)
					break
				}
			}
		}
		nodes = append(nodes, n)
		return n
	}
	root := add("", "RootWebArea", "Generated", focusable)
	main := add(root.NodeID, "main", "")
	list := add(main.NodeID, "list", "")
	for i := 0; i < items/2; i++ {
		li := &accessibility.Node{}
		next++
		li.NodeID = accessibility.NodeID(strconv.Itoa(next))
		li.Role, li.ParentID, li.BackendDOMNodeID = role("listitem"), list.NodeID, cdp.BackendNodeID(next)
		list.ChildIDs = append(list.ChildIDs, li.NodeID)
		nodes = append(nodes, li)
		child := func(r, name string, props ...*accessibility.Property) *accessibility.Node {
			next++
			n := &accessibility.Node{NodeID: accessibility.NodeID(strconv.Itoa(next)), Role: role(r), Name: str(name),
				ParentID: li.NodeID, BackendDOMNodeID: cdp.BackendNodeID(next), Properties: props}
			li.ChildIDs = append(li.ChildIDs, n.NodeID)
			nodes = append(nodes, n)
			return n
		}
		child("StaticText", "Item number "+strconv.Itoa(i)+" in stock")
		url := &accessibility.Property{Name: accessibility.PropertyNameURL, Value: str("http://shop.test/p/" + strconv.Itoa(i))}
		child("link", "Product "+strconv.Itoa(i), focusable, url)
		child("button", "Buy", focusable)
	}
	return &Input{URL: "http://shop.test/", Title: "Generated", Viewport: Size{1280, 800},
		Scroll: Scroll{0, 0, 1280, items * 20}, Frames: []Frame{{FrameID: "F", Nodes: nodes}}}
}

func TestGenInput(t *testing.T) {
	o := Build(genInput(5000), nil, Options{})
	if len(o.Elements) != 5000 {
		t.Fatalf("%d elements", len(o.Elements))
	}
	if c := o.Elements[1].Context; c != "Item number 0 in stock" {
		t.Errorf("Buy context %q", c)
	}
	all := Build(genInput(5000), nil, Options{IncludeAll: true})
	if len(all.Elements) != 5000+2500+1 {
		t.Errorf("includeAll: %d elements", len(all.Elements))
	}
}

func benchInputs(b *testing.B) map[string]*Input {
	return map[string]*Input{
		"wikipedia": loadRecording(b, "wikipedia").input(),
		"gen5000":   genInput(5000),
	}
}

func BenchmarkBuild(b *testing.B) {
	inputs := benchInputs(b)
	for _, name := range []string{"wikipedia", "gen5000"} {
		for _, all := range []bool{false, true} {
			in := inputs[name]
			label := name
			if all {
				label += "/includeAll"
			}
			b.Run(label, func(b *testing.B) {
				num := NewNumbering()
				b.ReportAllocs()
				for b.Loop() {
					Build(in, num, Options{IncludeAll: all})
				}
			})
		}
	}
}

func BenchmarkText(b *testing.B) {
	inputs := benchInputs(b)
	for _, name := range []string{"wikipedia", "gen5000"} {
		o := Build(inputs[name], nil, Options{IncludeAll: true})
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = len(o.Text())
			}
			b.ReportMetric(float64(n), "bytes/op-text")
		})
		b.Run(name+"/trim", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Trim(o, 0)
			}
		})
	}
}
