// Package file is a naming source read from a file of proxy strings, one object per line:
//
//	# comments start with '#'
//	App.Server.EchoObj@tcp -h 10.0.0.1 -p 9000:tcp -h 10.0.0.2 -p 9000 -w 50
//	App.Server.OtherObj@tcp -h 10.0.0.3 -p 9001
//
// An object on several lines gets the endpoints of all of them; an object the file does not list
// (or no longer lists) has no endpoints, so its calls fail with ErrNoEndpoint.
//
// Endpoints may name their set with -s ("tcp -h 10.0.0.1 -p 9000 -s app.sz.1"): a query with a
// set (set routing on) gets the endpoints the TARS registry would give for
// findObjectByIdInSameSet (naming.SelectSet); a query without one gets every endpoint.
//
// # Updating the file
//
// Replace the file atomically: write the new contents to a temporary file in the same directory
// and rename it over the old one (mv, os.Rename), so that a reader sees the old file or the new
// one, never a part. The source also guards against writers that rewrite the file in place: it
// reads the file every 250ms and applies a content only once it is complete, which means
//
//   - it is empty or ends in a newline (a line cut by a write in progress, "-p 40" of
//     "-p 40123", has none), and
//   - two reads in a row, one poll apart, returned the same bytes (a writer pausing at a line
//     boundary is still writing).
//
// So a change reaches the watches within two polls (half a second, a second at worst). Open's
// own read of the file counts as the first of the two, so a file opened with Open is in force
// when Open returns. A file
// whose last line lacks its newline is never applied: end every line, the last too, with '\n'.
// While the file cannot be read, is incomplete, or does not parse, the last good contents stay;
// each such problem is logged once (a warning), not on every poll. Before the first good
// contents, watches are told the problem (naming.Reporter), so that calls waiting for their
// first list fail saying why.
//
// Open is the strict constructor (the Communicator's naming-file uses it): a file that does not
// exist, cannot be read, is incomplete or does not parse is an error naming the file. New accepts
// a file that does not exist yet.
package file
