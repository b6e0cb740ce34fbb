package api

// PDFRequest prints the tab's page to a PDF file (Page.printToPDF).
type PDFRequest struct {
	Common
	// Path (save on the wire, as for screenshot and har) is the file to
	// write, absolute on the daemon's machine. Empty: a new file in the
	// screenshot directory, else the temp directory.
	Path string `json:"save,omitempty"`
	// Format is the paper: Letter (default), Legal, Tabloid, A3, A4 or A5.
	Format string `json:"format,omitempty"`
	// Width and Height are the paper in inches, both or neither; they win
	// over Format.
	Width  float64 `json:"width,omitempty"`
	Height float64 `json:"height,omitempty"`
	// Landscape swaps the paper's width and height.
	Landscape bool `json:"landscape,omitempty"`
	// PrintBackground prints background colours and images.
	PrintBackground bool `json:"print_background,omitempty"`
	// Margins are lengths with units ("1cm", "0.5in", "10mm", "20px");
	// an empty one is 1 cm.
	Margins *Margins `json:"margins,omitempty"`
	// Scale is 0.1 to 2 (0: 1).
	Scale float64 `json:"scale,omitempty"`
	// PageRanges are the one-based pages to print, "1-5, 8".
	PageRanges string `json:"page_ranges,omitempty"`
}

// Margins are page margins as lengths with units.
type Margins struct {
	Top    string `json:"top,omitempty"`
	Right  string `json:"right,omitempty"`
	Bottom string `json:"bottom,omitempty"`
	Left   string `json:"left,omitempty"`
}

// EmulateRequest emulates a device, a place and preferences on the tab,
// merged into what earlier emulate calls set; Reset clears it all, and
// List only lists the device presets. Every field is optional.
type EmulateRequest struct {
	Common
	// Device is a preset's name ("iPhone 15", "Pixel 7"; List lists them).
	Device string `json:"device,omitempty"`
	// Viewport is the layout viewport in CSS pixels; Scale is the device
	// pixel ratio.
	Viewport  *Viewport `json:"viewport,omitempty"`
	UserAgent string    `json:"user_agent,omitempty"`
	Touch     *bool     `json:"touch,omitempty"`
	Mobile    *bool     `json:"mobile,omitempty"`
	// Geolocation is granted to the page's origin.
	Geolocation *Geolocation `json:"geolocation,omitempty"`
	// Timezone is an IANA zone ("Europe/Paris"); Locale a BCP 47 tag
	// ("fr-FR").
	Timezone string `json:"timezone,omitempty"`
	Locale   string `json:"locale,omitempty"`
	// ColorScheme is light, dark or no-preference; ReducedMotion reduce
	// or no-preference.
	ColorScheme   string `json:"color_scheme,omitempty"`
	ReducedMotion string `json:"reduced_motion,omitempty"`
	Offline       *bool  `json:"offline,omitempty"`
	// Network throttles every request.
	Network *Network `json:"network,omitempty"`
	// CPUThrottling slows the CPU down by this factor (1 to 100).
	CPUThrottling float64 `json:"cpu_throttling,omitempty"`
	// Reset clears the emulation: the tab's own viewport, user agent,
	// locale and time zone come back.
	Reset bool `json:"reset,omitempty"`
	// List lists the device presets and the tab's emulation; it changes
	// nothing.
	List bool `json:"list,omitempty"`
}

// Geolocation is a position in degrees, and its accuracy in metres.
type Geolocation struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Accuracy  float64 `json:"accuracy,omitempty"`
}

// Network are throttled network conditions: latency in milliseconds,
// throughputs in kilobits per second (0: unthrottled).
type Network struct {
	Latency  float64 `json:"latency,omitempty"`
	Download float64 `json:"download,omitempty"`
	Upload   float64 `json:"upload,omitempty"`
}
