package deptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/tabpilot/tabpilot"

// layers is the import order of the module's packages, bottom first, as
// paths below the module; the test's messages number them from 0, as the
// comments do. A package may import only packages on layers below its
// own: not one above, and not a sibling on its own layer. Every package of
// the module must be on exactly one layer. Test files are not checked: an
// external test may import what it likes.
var layers = [][]string{
	// 0. The stable codes of the contract, and helpers with no project imports.
	{"errcode", "internal/msg", "internal/deptest", "internal/jsonl", "internal/testenv", "internal/cdptap", "tabs/js"},
	// 1. Small pure packages on errcode: URL patterns, the secrets store.
	{"urlpattern", "secrets"},
	// 2. The browser, its egress guard, and what tabs installs and renders with.
	{"browser", "browser/egress", "stealth", "render"},
	// 3. render's saved test pages and their scoring.
	{"render/readabilitysuite"},
	// 4. The leaf records and helpers of a tab: its network and console
	// record, its request routes, emulation, PDF.
	{"tabs/netlog", "tabs/route", "tabs/emulate", "tabs/pdf"},
	// 5. The page core: the CDP session of a page target and its event
	// state.
	{"tabs/pagecore"},
	// 6. Observation: the walker, its CDP side and the transform.
	{"tabs/observe"},
	// 7. Actions: element location, actionability and input.
	{"tabs/act"},
	// 8. Capture: screenshots, marks, the page as text; recording: locators
	// and the script writer.
	{"tabs/capture", "tabs/record"},
	// 9. The supervisor, the tab and its actions.
	{"tabs"},
	// 10. The run action's JavaScript runtime, bound to a tab.
	{"tabs/script"},
	// 11. The wire contract: standard library and errcode only (see stdOnly).
	{"api"},
	// 12. The dispatcher, and the doors speaking the contract.
	{"api/service", "api/rpc", "api/mcp"},
	// 13. The CLI's side of the daemon's socket (see light).
	{"api/client"},
	// 14. Programs.
	{"cmd/tabpilot", "bench/soak", "bench/suite"},
}

// heavy are the import path prefixes of the CDP stack and the JavaScript
// engine, which a light build must not link.
var heavy = []string{"github.com/chromedp/", "github.com/dop251/goja"}

// light are the builds that must not depend on a heavy package: the
// client library, and the thin CLI that starts the engine.
var light = []struct{ pkg, tags string }{
	{"api/client", ""},
	{"cmd/tabpilot", "thin"},
}

// stdOnly are the packages whose dependencies are the standard library and
// this module only.
var stdOnly = []string{"errcode", "api"}

// pkg is what go list -json says of a package.
type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// goList runs go list -json with args at the module's root and decodes
// the packages it prints.
func goList(t *testing.T, args ...string) []pkg {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the dependency test runs go list: %v", err)
	}
	cmd := exec.Command(gocmd, append([]string{"list", "-json=ImportPath,Imports,Standard"}, args...)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var pkgs []pkg
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list %s: decode: %v", strings.Join(args, " "), err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list %s listed no packages", strings.Join(args, " "))
	}
	return pkgs
}

// short returns path without the module prefix.
func short(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

func ours(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }

// TestLayers checks every import between the module's packages against
// layers, in the default build and the thin one.
func TestLayers(t *testing.T) {
	layer := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			if j, dup := layer[p]; dup {
				t.Errorf("the layer table puts %s on layers %d and %d", p, j, i)
			}
			layer[p] = i
		}
	}
	seen := map[string]bool{}
	reported := map[string]bool{} // a fault of both builds is reported once
	report := func(msg string) {
		if !reported[msg] {
			reported[msg] = true
			t.Error(msg)
		}
	}
	for _, tags := range []string{"", "thin"} {
		for _, p := range goList(t, "-tags="+tags, module+"/...") {
			name := short(p.ImportPath)
			seen[name] = true
			li, ok := layer[name]
			if !ok {
				report("package " + name + " is not in the layer table of internal/deptest/deptest_test.go: put it on the lowest layer above what it imports")
				continue
			}
			for _, imp := range p.Imports {
				if !ours(imp) {
					continue
				}
				dep := short(imp)
				lj, ok := layer[dep]
				if !ok || lj < li {
					continue // an unplaced dep is reported as a package of its own
				}
				rel := "a higher layer"
				if lj == li {
					rel = "its own layer"
				}
				report(fmt.Sprintf("%s (layer %d) imports %s (layer %d), on %s: a package imports only packages on layers below its own",
					name, li, dep, lj, rel))
			}
		}
	}
	for p := range layer {
		if !seen[p] {
			t.Errorf("the layer table names %s, which is not a package of the module: remove it", p)
		}
	}
}

// chain returns the shortest import chain from root to target in deps, as
// "a → b → c", or "" when there is none.
func chain(deps []pkg, root, target string) string {
	imports := map[string][]string{}
	for _, p := range deps {
		imports[p.ImportPath] = p.Imports
	}
	prev := map[string]string{root: ""}
	for queue := []string{root}; len(queue) > 0; queue = queue[1:] {
		at := queue[0]
		if at == target {
			var path []string
			for p := at; p != ""; p = prev[p] {
				path = append(path, short(p))
			}
			slices.Reverse(path)
			return strings.Join(path, " → ")
		}
		for _, next := range imports[at] {
			if _, ok := prev[next]; !ok {
				prev[next] = at
				queue = append(queue, next)
			}
		}
	}
	return ""
}

// TestLightBuilds checks that the client and the thin CLI link neither
// chromedp nor goja. For each heavy prefix it names how many packages are
// linked and the shortest import chain to one of them.
func TestLightBuilds(t *testing.T) {
	for _, l := range light {
		root := module + "/" + l.pkg
		deps := goList(t, "-deps", "-tags="+l.tags, root)
		for _, h := range heavy {
			n, shortest := 0, ""
			for _, d := range deps {
				if !strings.HasPrefix(d.ImportPath, h) {
					continue
				}
				n++
				if c := chain(deps, root, d.ImportPath); shortest == "" || strings.Count(c, "→") < strings.Count(shortest, "→") {
					shortest = c
				}
			}
			if n > 0 {
				t.Errorf("%s (tags %q) links %d packages of %s, which it must not: %s", l.pkg, l.tags, n, h, shortest)
			}
		}
	}
}

// TestStdOnly checks that errcode and api depend on the standard library
// and this module only. It names how many other packages they link and the
// shortest import chain to one of them.
func TestStdOnly(t *testing.T) {
	for _, name := range stdOnly {
		root := module + "/" + name
		deps := goList(t, "-deps", root)
		n, shortest := 0, ""
		for _, d := range deps {
			if d.Standard || ours(d.ImportPath) {
				continue
			}
			n++
			if c := chain(deps, root, d.ImportPath); shortest == "" || strings.Count(c, "→") < strings.Count(shortest, "→") {
				shortest = c
			}
		}
		if n > 0 {
			t.Errorf("%s links %d packages outside the standard library and this module, which it must not: %s", name, n, shortest)
		}
	}
}
