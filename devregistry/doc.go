// Package devregistry is a small TARS registry for development and tests: it serves the
// registry's query interface, QueryF (tars.tarsregistry.QueryObj: findObjectById,
// findObjectById4Any, findObjectById4All, findObjectByIdInSameGroup,
// findObjectByIdInSameStation, findObjectByIdInSameSet), from a file or a directory, plus the
// endpoints servers register with it over HTTP. A Communicator whose locator names it resolves
// proxy strings without '@', with set routing, as it would against the TARS framework's
// registry. cmd/tarsregistry runs it as a program; tests and examples start it in-process with
// Start.
//
// It is a development tool, not the TARS framework's registry (tarsregistry of TarsFramework):
// no database, no node agents, no health reports from tarsnode, no admin interface of TARS's;
// only QueryF is TARS's, so that clients cannot tell the difference for naming.
//
// # Endpoints from a file
//
// A TOML file (Options.File ending in .toml):
//
//	[objects]   # active endpoints per object, in the endpoint grammar (-s: the endpoint's set)
//	"App.Server.EchoObj" = ["tcp -h 127.0.0.1 -p 9000 -s app.sz.1", "tcp -h 127.0.0.1 -p 9001 -s app.sh.1"]
//	[inactive]  # registered but inactive endpoints (the 4Any/4All functions and the lists' inactive part)
//	"App.Server.EchoObj" = ["tcp -h 127.0.0.1 -p 9002"]
//	[groups]    # IDC groups by address: callers and endpoints in these networks are in the group
//	sz = ["10.1.0.0/16"]
//	sh = ["10.2.0.0/16", "127.0.0.1/32"]
//
// or a directory (any other Options.File) whose files are all in the naming-file format of
// package naming/file ("App.Server.EchoObj@tcp -h 127.0.0.1 -p 9000:tcp ...", one object a line),
// merged; files whose names start with '.' are skipped. The file or directory is read again every
// Options.Reload (1s), and a new content is applied once two reads in a row returned it (so a
// change is served within two reloads; rename a new file over the old one to be safe from
// readers of half-written files); a content that does not parse is logged and the last good one
// stays.
//
// # Which endpoints a query gets
//
//   - findObjectById: the active endpoints; 4Any and 4All: the active and the inactive ones.
//   - findObjectByIdInSameGroup: those in the caller's group (by its address and [groups]) if it
//     has one and the object has active endpoints there; otherwise all of them, as TARS falls
//     back to the other groups.
//   - findObjectByIdInSameStation(id, station): those in the group named station.
//   - findObjectByIdInSameSet(id, "name.area.group"): those of that set; if none, those of the
//     area's wildcard set "name.area.*"; with group "*", every set of the area. An object none of
//     whose endpoints is in a set of that set name is not deployed in that set, and all of its
//     endpoints are returned (naming.SelectSet, which the other sources follow too). A set id
//     that is not three dot-separated parts, or whose name or area is "*", answers -1, and so
//     does a set name the object is deployed in with no endpoint in the set nor in the area's
//     wildcard set, as TARS's registry answers.
//
// Unknown objects answer 0 with empty lists (a client then keeps its last list and retries).
//
// # Registrations
//
// Servers register over HTTP (Options.HTTPAddr), with a time to live, and renew by registering
// again; a registration not renewed in time expires, so a server that dies leaves the lists:
//
//	curl -X POST 'http://127.0.0.1:17891/register?obj=App.Server.EchoObj&ttl=10s' \
//	     --data-urlencode 'endpoint=tcp -h 127.0.0.1 -p 9000 -s app.sz.1'
//	curl -X POST 'http://127.0.0.1:17891/deregister?obj=...' --data-urlencode 'endpoint=...'
//	curl http://127.0.0.1:17891/objects   # everything served, as JSON
//
// A registered endpoint joins the object's active list after the file's; an address is listed
// once: registering one the file lists as active adds nothing, and one it lists as inactive
// makes it active.
//
// Register and Deregister do the same from Go. HTTP rather than a TARS servant of its own: a
// registration is one line of shell from any language or script, with no stubs to generate, and
// an interface of this tool's own would suggest a compatibility with the TARS framework's
// registry that it does not have. In-process, Registry.Register needs no HTTP at all.
//
// # Concurrency
//
// A Registry is safe for concurrent use: queries, registrations and reloads take its mutex
// briefly; Close stops the server, the HTTP listener and the reloading.
package devregistry
