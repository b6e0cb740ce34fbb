package render

import "errors"

// Sentinel errors. They are returned wrapped with context; test with errors.Is.
var (
	// ErrBadFormat: Extract was asked for a format other than "markdown",
	// "text" or "html".
	ErrBadFormat = errors.New("render: bad extract format (want markdown, text or html)")

	// ErrBadImage: the screenshot bytes are empty or not a PNG or JPEG image
	// that decodes.
	ErrBadImage = errors.New("render: not a decodable PNG or JPEG image")

	// ErrTooSmall: ImageOptions.MaxBytes is so small that even the smallest
	// JPEG ModelImage makes does not fit.
	ErrTooSmall = errors.New("render: image does not fit the byte budget")
)
