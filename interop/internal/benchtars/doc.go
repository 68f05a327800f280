// Package benchtars holds the Go that tars2tarscomm generates from testdata/bench.tars (make
// generate), for the encode/decode benchmark against TarsGo (package tarsgobench).
package benchtars
