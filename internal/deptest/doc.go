// Package deptest holds no code: its test checks the import graph of the
// module, as tailscale's tstest/deptest does, so that the layering of
// docs/architecture.md (sections 1 and 6: arrows point down only) is
// enforced, not just described.
//
// The test fails when
//   - a package imports one on its own layer or a higher one, in the table
//     of layers in deptest_test.go;
//   - a package of the module is not in that table (a new package must be
//     placed), or the table names a package that does not exist;
//   - a light build — api/client, or the thin CLI (go build -tags thin
//     ./cmd/tabpilot) — depends on chromedp or goja, or a package meant
//     to be standard library only (errcode, api) depends on a module
//     outside this one.
//
// To add a package, put it on the lowest layer above everything it
// imports; to let two packages of one layer import each other, split the
// layer. The test runs go list, so it needs the go command on PATH.
package deptest
