package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// command is one verb or mode: its flag set and its help.
type command struct {
	name    string
	args    string // the positional synopsis, e.g. "URL"
	summary string // one line, for the verb list
	about   string // the help's description
	fs      *flag.FlagSet
	groups  []string          // group titles in order
	group   map[string]string // flag name -> group title
	cur     string
}

func newCommand(name, args, summary, about string) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are printed by us
	fs.Usage = func() {}
	return &command{name: name, args: args, summary: summary, about: about, fs: fs, group: map[string]string{}}
}

// section starts a group of flags in the help; flags registered after it
// (until the next section) belong to it.
func (c *command) section(title string) *flag.FlagSet {
	c.close()
	c.cur = title
	c.groups = append(c.groups, title)
	return c.fs
}

// close assigns the flags registered so far to the current group.
func (c *command) close() {
	c.fs.VisitAll(func(f *flag.Flag) {
		if _, ok := c.group[f.Name]; !ok {
			c.group[f.Name] = c.cur
		}
	})
}

// parse parses args, allowing flags after positional arguments ("open URL
// --tab x"); "--" ends the flags. It returns the positional arguments,
// flag.ErrHelp for -h/--help, or the flag package's error.
func (c *command) parse(args []string) ([]string, error) {
	c.close()
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || isNumber(a) {
			// A negative number is an argument (scroll 0 -300), not a flag.
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if strings.ContainsRune(name, '=') {
			continue
		}
		if f := c.fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := c.fs.Parse(flags); err != nil {
		return nil, err
	}
	return append(pos, c.fs.Args()...), nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// synopsis is "tabpilot VERB ARGS".
func (c *command) synopsis() string {
	s := "tabpilot " + c.name
	if c.args != "" {
		s += " " + c.args
	}
	return s
}

// usage writes the command's help.
func (c *command) usage(w io.Writer) {
	c.close()
	fmt.Fprintf(w, "Usage: %s [flags]\n\n%s\n", c.synopsis(), strings.TrimSpace(c.about))
	byGroup := map[string][]*flag.Flag{}
	c.fs.VisitAll(func(f *flag.Flag) { byGroup[c.group[f.Name]] = append(byGroup[c.group[f.Name]], f) })
	for _, g := range c.groups {
		flags := byGroup[g]
		if len(flags) == 0 {
			continue
		}
		sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, f := range flags {
			kind, text := flag.UnquoteUsage(f)
			head := "  --" + f.Name
			if kind != "" && !isBoolFlag(f) {
				head += " " + kind
			}
			if len(head) <= 22 {
				fmt.Fprintf(w, "%-24s%s", head, text)
			} else {
				fmt.Fprintf(w, "%s\n%24s%s", head, "", text)
			}
			if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "0s" && !strings.Contains(text, "(default") {
				fmt.Fprintf(w, " (default %q)", d)
			}
			fmt.Fprintln(w)
		}
	}
}

// errHelp reports whether err asks for help.
func errHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }
