// Package file is a naming source read from a file of proxy strings, one object per line:
//
//	# comments start with '#'
//	App.Server.EchoObj@tcp -h 10.0.0.1 -p 9000:tcp -h 10.0.0.2 -p 9000 -w 50
//	App.Server.OtherObj@tcp -h 10.0.0.3 -p 9001
//
// An object on several lines gets the endpoints of all of them. The file is checked every
// 250ms (its size, modification time and contents) and a change reaches the watches within a
// second; an object the file does not list (or no longer lists) has no endpoints, so its calls
// fail with ErrNoEndpoint. While the file cannot be read or parsed, the last good contents stay.
package file
