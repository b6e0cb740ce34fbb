// Package render turns what a tab captured into what a model or a person gets.
// It does no CDP work itself: package tabs/capture captures the bytes
// (Page.captureScreenshot) and the rendered HTML (the DOM flattened by
// tabs/js/flatten.js, through Runtime.evaluate) and hands them here.
//
// Screenshots: the copy for a model is a JPEG that fits 1024x1024 px and
// 150 KiB by default. The fast way (BenchmarkCapture: about 2x faster on a
// viewport, 6x or more on a full page, as legible) is to let Chromium render
// it at that size: capture with clip.scale = FitScale(...), JPEG quality 70,
// and adopt the bytes with ScaledImage, which re-encodes only when they do not
// fit. When the full-resolution PNG is needed anyway (a save path or a
// screenshot directory), ModelImage derives the copy from it (decode,
// downscale with imaging, JPEG 70 then lower quality then smaller size).
// SaveScreenshot persists the PNG (an explicit path, else a timestamped file
// in the configured directory); WriteTemp puts the model copy in a private
// 0600 temp file when there is nowhere else to put it.
//
// Extraction: Extract runs Readability (codeberg.org/readeck/go-readability/v2)
// on the rendered HTML, falls back to the first of `main article`, `article`,
// `main`, `[role=main]` and `body` that has text, and converts the result to
// markdown (github.com/JohannesKaufmann/html-to-markdown/v2), plain text or
// cleaned HTML.
//
// ModelImage, ScaledImage, FitScale and Extract are pure functions of their
// input; everything is safe for concurrent use.
package render
