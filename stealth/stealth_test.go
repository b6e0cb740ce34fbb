package stealth

import (
	"strings"
	"testing"
)

func TestFlags(t *testing.T) {
	got := strings.Join(Flags(&Options{Locale: "de-DE", WindowWidth: 1280, WindowHeight: 800, UserAgent: "UA"}), " ")
	for _, want := range []string{"--disable-blink-features=AutomationControlled", "--window-size=1280,800", "--lang=de-DE", "--user-agent=UA", "primaryPointerType=4"} {
		if !strings.Contains(got, want) {
			t.Errorf("Flags = %s, missing %s", got, want)
		}
	}
	if strings.Contains(strings.Join(Flags(nil), " "), "--user-agent") {
		t.Error("Flags(nil) sets a user agent")
	}
}

func TestScript(t *testing.T) {
	s := Script(&Options{HardwareConcurrency: 4})
	for _, name := range patches {
		src, err := jsFS.ReadFile("js/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s, string(src)) {
			t.Errorf("Script lacks %s", name)
		}
		first, _, _ := strings.Cut(string(src), "\n")
		if !strings.HasPrefix(first, "// "+name+" — ") {
			t.Errorf("%s does not start with its doc comment: %q", name, first)
		}
	}
	if !strings.Contains(s, `"hardwareConcurrency":4`) || !strings.HasPrefix(s, "(function (G, O) {") {
		t.Errorf("Script options or wrapper missing: %.200s", s)
	}
}

func TestUserAgentFor(t *testing.T) {
	if b, v := greasedBrand(156); b != "Not:A-Brand" || v != "8" {
		t.Errorf("greasedBrand(156) = %q %q", b, v)
	}
	ua, err := userAgentFor((*Options)(nil).withDefaults(), "HeadlessChrome/156.0.8078.108",
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36")
	if err != nil {
		t.Fatal(err)
	}
	if ua.UserAgent != "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36" {
		t.Errorf("user agent %q", ua.UserAgent)
	}
	if got := jsonOf(ua.Metadata.Brands); got != `[{"brand":"Not:A-Brand","version":"8"},{"brand":"Chromium","version":"156"}]` {
		t.Errorf("brands %s", got)
	}
	if ua.Metadata.Platform != "Linux" || ua.FullVersion != "156.0.8078.108" || ua.Platform != "" {
		t.Errorf("metadata %+v, platform %q", ua.Metadata, ua.Platform)
	}
	win, _ := userAgentFor((*Options)(nil).withDefaults(), "Chrome/156.0.1.2", "")
	if win == nil || !strings.Contains(win.UserAgent, "Chrome/156.0.0.0") {
		t.Errorf("user agent from version alone: %+v", win)
	}
	if _, err := userAgentFor((*Options)(nil).withDefaults(), "Chrome", ""); err == nil {
		t.Error("no error for a product without a version")
	}
	if got := DefaultUserAgent("HeadlessChrome/156.0.8078.108"); !strings.Contains(got, "Chrome/156.0.0.0 Safari") || strings.Contains(got, "Headless") {
		t.Errorf("DefaultUserAgent = %q", got)
	}
	if got := acceptLanguage([]string{"fr-FR", "fr", "en"}); got != "fr-FR,fr,en" {
		t.Errorf("acceptLanguage = %q", got)
	}
}
