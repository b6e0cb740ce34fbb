package observe

// disambiguate gives elements that share a role, name and frame a context
// that tells them apart (see disambiguate).
func (b *builder) disambiguate() {
	for i := range b.els {
		b.els[i].href = b.meta[i].url
	}
	disambiguate(b.els, func(i int, name string) [3]string {
		m := &b.meta[i]
		return [3]string{
			b.containerText(m.containerFrame, m.containerIdx, name),
			m.heading,
			clean(m.landmark, maxContext),
		}
	})
}

// disambiguate gives elements that share a role, name and frame a context
// that tells them apart: the text of their list item or row, else the
// heading before them, else their landmark (the three candidates cands
// returns for element i, whose name is name). Each element takes the first
// of these that is set, differs from the name, and differs from the same
// candidate of at least one other element of the group; an element that no
// candidate tells apart gets none. Links to the same URL (Element.href) are
// the same choice and need no context.
func disambiguate(els []Element, cands func(i int, name string) [3]string) {
	type key struct{ role, name, frame string }
	groups := make(map[key][]int, len(els))
	for i := range els {
		el := &els[i]
		if isStructural(el.Role) || el.Role == "list" || (el.Role == "link" && el.Name == "") {
			continue // a link without a name shows its URL
		}
		k := key{el.Role, el.Name, el.Frame}
		groups[k] = append(groups[k], i)
	}
	const levels = 3
	var cs [][levels]string
	var need []bool
	for k, g := range groups {
		if len(g) < 2 {
			continue
		}
		need = need[:0]
		for range g {
			need = append(need, true)
		}
		if k.role == "link" {
			// Links to one URL are one choice. The largest set of
			// links to one URL needs no context; the others do.
			count := map[string]int{}
			for _, i := range g {
				count[els[i].href]++
			}
			if len(count) == 1 {
				continue
			}
			top, n := "", 1
			for _, i := range g { // in document order, so ties pick the first
				if c := count[els[i].href]; c > n {
					top, n = els[i].href, c
				}
			}
			if n > 1 {
				for x, i := range g {
					need[x] = els[i].href != top
				}
			}
		}
		cs = cs[:0]
		for _, i := range g {
			c := cands(i, k.name)
			for l := range c {
				c[l] = clean(c[l], maxContext)
				if c[l] == k.name {
					c[l] = ""
				}
			}
			cs = append(cs, c)
		}
		for x, i := range g {
			if !need[x] {
				continue
			}
			for l := 0; l < levels; l++ {
				c := cs[x][l]
				if c == "" {
					continue
				}
				differs := false
				for y := range cs {
					if cs[y][l] != c {
						differs = true
						break
					}
				}
				if differs {
					els[i].Context = c
					break
				}
			}
		}
	}
}
