package asyncproc

import "runtime"

// goid returns the id of the calling goroutine, read from the first line of its stack trace
// ("goroutine 42 [running]:"). Go has no goroutine-local storage; the pool needs to know
// whether Close, or a wait for a future (Wait), runs inside one of its callbacks (see Pool.Close,
// workers.go). It costs a stack trace (3 µs to tens of µs, growing with the stack's depth), so it
// is called once per worker as it starts, once per Close, and once per wait for a future that
// lasts lendAfter while a callback runs somewhere (at once while a worker polls); never per call.
// It returns 0 if the line cannot be parsed; no goroutine has id 0.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0
	}
	var id uint64
	for _, ch := range b[len(prefix):] {
		if ch < '0' || ch > '9' {
			return id
		}
		id = id*10 + uint64(ch-'0')
	}
	return 0 // the buffer ended inside the number: cannot happen with 64 bytes
}
