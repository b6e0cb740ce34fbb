package stealth

import (
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/emulation"
)

// userAgent is the user agent that Install presents, with its client hints.
type userAgent struct {
	UserAgent   string
	Platform    string // navigator.platform; empty: the browser's own
	FullVersion string
	Metadata    emulation.UserAgentMetadata
}

// greaseChars and greaseVersions are Chromium's GREASE alphabet for the brand list
// (components/embedder_support/user_agent_utils.cc).
var (
	greaseChars    = []string{" ", "(", ":", "-", ".", "/", ")", ";", "=", "?", "_"}
	greaseVersions = []string{"8", "99", "24"}
)

// greasedBrand returns the GREASE brand and version Chromium pairs with a major version.
func greasedBrand(major int) (brand, version string) {
	brand = "Not" + greaseChars[major%len(greaseChars)] + "A" + greaseChars[(major+1)%len(greaseChars)] + "Brand"
	return brand, greaseVersions[major%len(greaseVersions)]
}

// DefaultUserAgent returns the user agent a headed Chromium of the given version ("156.0.8078.108",
// or a product string "HeadlessChrome/156.0.8078.108") sends on this machine's OS, in Chromium's
// reduced form: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)
// Chrome/156.0.0.0 Safari/537.36". It returns "" when version has no major number. Give it to
// Options.UserAgent before the launch when the version is known, so Flags passes --user-agent.
func DefaultUserAgent(version string) string {
	if _, v, ok := strings.Cut(version, "/"); ok {
		version = v
	}
	major, _, _ := strings.Cut(version, ".")
	if major == "" || strings.Trim(major, "0123456789") != "" {
		return ""
	}
	platform, arch, _ := hostPlatform()
	token := "X11; Linux x86_64"
	switch platform {
	case "Windows":
		token = "Windows NT 10.0; Win64; x64"
	case "macOS":
		token = "Macintosh; Intel Mac OS X 10_15_7"
	case "Linux":
		if arch == "arm" {
			token = "X11; Linux aarch64"
		}
	}
	return "Mozilla/5.0 (" + token + ") AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + major + ".0.0.0 Safari/537.36"
}

// userAgentFor derives the user agent and its client hints from Browser.getVersion's product
// ("HeadlessChrome/156.0.8078.108") and user agent.
func userAgentFor(c Options, product, browserUA string) (*userAgent, error) {
	_, full, ok := strings.Cut(product, "/")
	if !ok || full == "" {
		return nil, fmt.Errorf("browser product %q has no version", product)
	}
	majorStr, _, _ := strings.Cut(full, ".")
	var major int
	if _, err := fmt.Sscanf(majorStr, "%d", &major); err != nil || major <= 0 {
		return nil, fmt.Errorf("browser product %q has no major version", product)
	}
	ua := c.UserAgent
	if ua == "" {
		ua = strings.ReplaceAll(browserUA, "HeadlessChrome/", "Chrome/")
	}
	if ua == "" {
		ua = DefaultUserAgent(full)
	}
	hostOS, arch, bitness := hostPlatform()
	osName, navPlatform, osVersion := hostOS, "", ""
	switch {
	case strings.Contains(ua, "Windows"):
		osName, navPlatform, osVersion = "Windows", "Win32", "10.0.0"
	case strings.Contains(ua, "Macintosh"):
		osName, navPlatform, osVersion = "macOS", "MacIntel", "10.15.7"
	case strings.Contains(ua, "Android"):
		osName = "Android"
	case strings.Contains(ua, "Linux"):
		osName = "Linux"
		if strings.Contains(ua, "aarch64") {
			arch = "arm"
		}
	}
	if osName == hostOS {
		navPlatform = "" // the browser's own agrees with the OS
	}
	if c.Platform != "" {
		navPlatform = c.Platform
	}
	gb, gv := greasedBrand(major)
	grease := &emulation.UserAgentBrandVersion{Brand: gb, Version: gv}
	chromium := &emulation.UserAgentBrandVersion{Brand: "Chromium", Version: majorStr}
	greaseFull := &emulation.UserAgentBrandVersion{Brand: gb, Version: gv + ".0.0.0"}
	chromiumFull := &emulation.UserAgentBrandVersion{Brand: "Chromium", Version: full}
	brands := []*emulation.UserAgentBrandVersion{grease, chromium}
	fullList := []*emulation.UserAgentBrandVersion{greaseFull, chromiumFull}
	if major%2 == 1 {
		brands = []*emulation.UserAgentBrandVersion{chromium, grease}
		fullList = []*emulation.UserAgentBrandVersion{chromiumFull, greaseFull}
	}
	return &userAgent{
		UserAgent:   ua,
		Platform:    navPlatform,
		FullVersion: full,
		Metadata: emulation.UserAgentMetadata{
			Brands:          brands,
			FullVersionList: fullList,
			Platform:        osName,
			PlatformVersion: osVersion,
			Architecture:    arch,
			Bitness:         bitness,
			Model:           "",
			Mobile:          osName == "Android",
			Wow64:           false,
			FormFactors:     []string{"Desktop"},
		},
	}, nil
}
