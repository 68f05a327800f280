// Package docstest keeps the code of the documentation true: it has no code of its own, only
// tests that take every ```go and ```toml block of README.md, docs/ARCHITECTURE.md and
// docs/cookbook/*.md and check it against the repository as it is, so that a renamed function or
// a changed configuration key fails `make test` instead of leaving the docs wrong.
//
//   - A ```toml block must load with conf.Load, which is strict: an unknown or misspelled key, a
//     value of the wrong type, a duration without a unit or a value out of range is an error.
//     The files a block names for ca, cert and key are created empty beside it, since conf checks
//     only that they exist.
//   - A ```go block must compile against the current API. A block that starts with a package
//     clause is a whole file (its package is renamed, so that a main is not linked). Any other
//     block is a fragment: its import, type and func declarations (at column 0) stay at the top
//     level of a generated file, the rest becomes the body of a function, "..." lines are left
//     out, and the variables it declares count as used (a fragment shows a result without using
//     it). Its imports are chosen by the package names it uses (the table packages in the test:
//     the project's packages, the standard library's and the integrations' dependencies), and the
//     free variables a document's text gives its fragments (comm, prx, ctx, ...) are declared by
//     that document's preamble in the test. The cookbook's generated package of Hello.tars
//     (example.com/greeter/protocol/hello) is examples/greeter/hello, generated from the same
//     IDL (TestIDLBlock checks that it is the same). The generated files are compiled with go build
//     through an -overlay (nothing is written into the repository), one package per block, with
//     //line directives so that the compiler's errors name the markdown file and line. A block
//     using the prometheus, otel or etcd integration is compiled in that module's directory,
//     against its go.mod; the root go.mod gains nothing. GOPROXY=off: no network (a module whose
//     dependencies are not in the module cache is skipped, saying so).
//
// A ```toml block that is not a configuration of package conf, or a block that cannot be
// checked, is marked by an HTML comment on the line just before it (blank lines between are
// allowed), which GitHub does not show:
//
//	<!-- snippet: devregistry -->            a registry file of cmd/tarsregistry, loaded by devregistry.Start
//	<!-- snippet: fragment: <why> -->        not checked; the reason is required. Keep these rare.
//
// An unknown marker is an error. The failure message names the file, the block's line and the
// loader's or the compiler's error. DOCSTEST_DUMP=1 go test -v ./internal/docstest logs the
// generated packages.
package docstest
