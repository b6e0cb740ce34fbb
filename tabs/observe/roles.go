package observe

import (
	"github.com/chromedp/cdproto/accessibility"
)

// Regions of the page an element can be in (Element.Region), from its
// nearest landmark or dialog ancestor.
const (
	RegionMain          = "main"
	RegionDialog        = "dialog"
	RegionBanner        = "banner"
	RegionNavigation    = "navigation"
	RegionContentInfo   = "contentinfo"
	RegionComplementary = "complementary"
)

// isInteractive reports whether role is one a person acts on.
func isInteractive(role string) bool {
	switch role {
	case "link", "button", "textbox", "searchbox", "combobox", "listbox", "option", "checkbox",
		"radio", "switch", "slider", "spinbutton", "menuitem", "menuitemcheckbox", "menuitemradio",
		"tab", "treeitem":
		return true
	}
	return false
}

// noFocusFallback reports whether role stays structure even when focusable:
// pages often give such elements tabindex=-1 to move focus there.
func noFocusFallback(role string) bool {
	switch role {
	case "heading", "main", "navigation", "banner", "contentinfo", "complementary", "region",
		"form", "search", "dialog", "alertdialog", "alert", "article", "document", "list",
		"table", "group", "RootWebArea", "Iframe", "MenuListPopup":
		return true
	}
	return false
}

// hasValue reports whether role is one whose value Build reads.
func hasValue(role string) bool {
	switch role {
	case "textbox", "searchbox", "combobox", "spinbutton", "slider":
		return true
	}
	return false
}

// landmarkLabel returns the word used as a context for a landmark role
// kept by IncludeAll, and false for other roles.
func landmarkLabel(role string) (string, bool) {
	switch role {
	case "main", "region", "form", "search":
		return role, true
	case "navigation":
		return "nav", true
	case "banner":
		return "header", true
	case "contentinfo":
		return "footer", true
	case "complementary":
		return "aside", true
	}
	return "", false
}

// isStructural reports whether role is one of the roles only IncludeAll keeps.
func isStructural(role string) bool {
	switch role {
	case "heading", "text", "dialog", "alertdialog", "alert":
		return true
	}
	_, ok := landmarkLabel(role)
	return ok
}

// roleOf returns a node's role. Common roles are matched on the raw JSON,
// so reading them allocates nothing.
func roleOf(n *accessibility.Node) string {
	if n.Role == nil {
		return ""
	}
	switch string(n.Role.Value) {
	case `"link"`:
		return "link"
	case `"button"`:
		return "button"
	case `"textbox"`:
		return "textbox"
	case `"searchbox"`:
		return "searchbox"
	case `"combobox"`:
		return "combobox"
	case `"listbox"`:
		return "listbox"
	case `"option"`:
		return "option"
	case `"checkbox"`:
		return "checkbox"
	case `"radio"`:
		return "radio"
	case `"switch"`:
		return "switch"
	case `"slider"`:
		return "slider"
	case `"spinbutton"`:
		return "spinbutton"
	case `"menuitem"`:
		return "menuitem"
	case `"menuitemcheckbox"`:
		return "menuitemcheckbox"
	case `"menuitemradio"`:
		return "menuitemradio"
	case `"tab"`:
		return "tab"
	case `"treeitem"`:
		return "treeitem"
	case `"heading"`:
		return "heading"
	case `"main"`:
		return "main"
	case `"navigation"`:
		return "navigation"
	case `"banner"`:
		return "banner"
	case `"contentinfo"`:
		return "contentinfo"
	case `"complementary"`:
		return "complementary"
	case `"region"`:
		return "region"
	case `"form"`:
		return "form"
	case `"search"`:
		return "search"
	case `"dialog"`:
		return "dialog"
	case `"alertdialog"`:
		return "alertdialog"
	case `"alert"`:
		return "alert"
	case `"article"`:
		return "article"
	case `"document"`:
		return "document"
	case `"list"`:
		return "list"
	case `"listitem"`:
		return "listitem"
	case `"table"`:
		return "table"
	case `"row"`:
		return "row"
	case `"cell"`:
		return "cell"
	case `"gridcell"`:
		return "gridcell"
	case `"columnheader"`:
		return "columnheader"
	case `"rowheader"`:
		return "rowheader"
	case `"rowgroup"`:
		return "rowgroup"
	case `"group"`:
		return "group"
	case `"generic"`:
		return "generic"
	case `"none"`:
		return "none"
	case `"paragraph"`:
		return "paragraph"
	case `"image"`:
		return "image"
	case `"img"`:
		return "img"
	case `"figure"`:
		return "figure"
	case `"caption"`:
		return "caption"
	case `"blockquote"`:
		return "blockquote"
	case `"code"`:
		return "code"
	case `"emphasis"`:
		return "emphasis"
	case `"strong"`:
		return "strong"
	case `"superscript"`:
		return "superscript"
	case `"subscript"`:
		return "subscript"
	case `"time"`:
		return "time"
	case `"note"`:
		return "note"
	case `"status"`:
		return "status"
	case `"menu"`:
		return "menu"
	case `"menubar"`:
		return "menubar"
	case `"tablist"`:
		return "tablist"
	case `"tabpanel"`:
		return "tabpanel"
	case `"tree"`:
		return "tree"
	case `"toolbar"`:
		return "toolbar"
	case `"separator"`:
		return "separator"
	case `"LabelText"`:
		return "LabelText"
	case `"LineBreak"`:
		return "LineBreak"
	case `"ListMarker"`:
		return "ListMarker"
	case `"StaticText"`:
		return "StaticText"
	case `"InlineTextBox"`:
		return "InlineTextBox"
	case `"RootWebArea"`:
		return "RootWebArea"
	case `"Iframe"`:
		return "Iframe"
	case `"MenuListPopup"`:
		return "MenuListPopup"
	case `"Abbr"`:
		return "Abbr"
	case `"Section"`:
		return "Section"
	}
	return rawString(n.Role.Value)
}

// candidateCap estimates how many elements the nodes can give, to size
// Build's slices once.
func candidateCap(nodes []*accessibility.Node, roles []string, includeAll bool) int {
	c := 0
	for i, n := range nodes {
		if n == nil || n.Ignored || n.BackendDOMNodeID == 0 {
			continue
		}
		switch roles[i] {
		case "InlineTextBox", "generic", "none", "LineBreak", "ListMarker", "listitem", "list",
			"paragraph", "row", "cell", "LabelText", "RootWebArea", "Iframe", "image", "table", "rowgroup",
			"superscript", "strong", "emphasis", "Abbr", "columnheader", "rowheader", "group", "note":
		case "StaticText", "heading":
			if includeAll {
				c++
			}
		default:
			c++
		}
	}
	return c
}
