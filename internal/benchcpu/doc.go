// Package benchcpu reports the CPU time a benchmark's process spends per op, as the metric
// cpu-ns/op: the user and system time of every thread (the benchmark's goroutines, the garbage
// collector's work they cause, an in-process server), divided by b.N. On a shared machine it is
// steadier than ns/op, which also counts the time other processes hold the cores. It is for
// benchmarks only, of any package of the module and of the nested modules (interop,
// benchmarks), whose paths are inside this module's tree.
package benchcpu
